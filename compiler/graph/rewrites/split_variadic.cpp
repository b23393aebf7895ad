#include "compiler/graph/rewrites/split_variadic.h"

#include "compiler/graph/ops/op_util.h"

namespace kiln::graph {


namespace {

bool is_variadic(const Node& n) {
  return (n.op_type == "Max" || n.op_type == "Min") && n.inputs.size() > 2;
}

}  // namespace

int split_variadic(Graph& g) {
  int rewritten = 0;
  std::vector<Node> out;
  for (Node& n : g.nodes) {
    if (!is_variadic(n)) {
      out.push_back(std::move(n));
      continue;
    }
    std::string acc = n.inputs[0];
    for (size_t k = 1; k < n.inputs.size(); ++k) {
      std::optional<graph::ValueType> a = g.type_of(acc), b = g.type_of(n.inputs[k]);
      user_check(a && b && a->is_concrete() && b->is_concrete())
          << g.describe(n) << ": input '" << n.inputs[k] << "' has no concrete shape";
      Node step;
      step.name = n.name.empty() ? "" : n.name + "/" + std::to_string(k);
      step.op_type = n.op_type;
      step.source_index = n.source_index;
      step.inputs = {acc, n.inputs[k]};
      const bool last = k + 1 == n.inputs.size();
      step.outputs = {last ? n.outputs[0] : g.unique_name(n.outputs[0] + "." + std::to_string(k))};
      if (!last)
        g.types[step.outputs[0]] =
            graph::ValueType::of(a->dtype, graph::broadcast_shapes(a->dims(), b->dims()));
      acc = step.outputs[0];
      out.push_back(std::move(step));
    }
    ++rewritten;
  }
  g.nodes = std::move(out);
  return rewritten;
}

}  // namespace kiln::graph
