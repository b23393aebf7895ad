#include "compiler/graph/passes/fold_constants.h"

#include "compiler/graph/evaluate.h"
#include "compiler/graph/ops/op.h"
#include "compiler/graph/ops/quantize.h"

namespace kiln::graph {

namespace {

bool all_inputs_constant(const Graph& graph, const Node& node) {
  bool any = false;
  auto constant = [&](const std::string& in) {
    if (in.empty()) return true;
    any = true;
    return graph.is_constant(in);
  };
  for (const std::string& in : node.inputs)
    if (!constant(in)) return false;
  for (const Node& e : node.epilogue)
    for (const std::string& in : e.inputs)
      if (!constant(in)) return false;
  // A node with no inputs at all (none supported today) is left alone.
  return any;
}

// Shape and Size of a value whose type is concrete.
std::optional<std::vector<HostTensor>> fold_from_types(const Graph& graph, const Node& node) {
  const OpDef* def = find_op(node.op_type);
  if (!def || !def->fold_from_types || !node.epilogue.empty()) return std::nullopt;
  std::vector<std::optional<TensorType>> types;
  std::vector<const HostTensor*> values;
  for (const std::string& in : node.inputs) {
    std::optional<ValueType> t = in.empty() ? std::nullopt : graph.type_of(in);
    if (!in.empty() && !(t && t->is_concrete())) return std::nullopt;
    types.push_back(t ? std::optional<TensorType>(TensorType{t->dtype, t->dims()}) : std::nullopt);
    values.push_back(nullptr);
  }
  return def->fold_from_types(InferContext(node, types, values));
}

}  // namespace

int fold_constants(Graph& graph) {
  std::vector<Node> kept;
  int folded = 0;
  for (Node& node : graph.nodes) {
    std::optional<std::vector<HostTensor>> out = fold_from_types(graph, node);
    if (!out && all_inputs_constant(graph, node) && !is_quantized_weight(graph, node))
      out = evaluate_node(graph, node, [&](const std::string& name) -> const HostTensor* {
        auto it = graph.initializers.find(name);
        return it == graph.initializers.end() ? nullptr : &it->second;
      });
    if (!out) {
      kept.push_back(std::move(node));
      continue;
    }
    for (size_t i = 0; i < node.outputs.size() && i < out->size(); ++i) {
      if (node.outputs[i].empty()) continue;
      graph.types.erase(node.outputs[i]);  // the initializer's data carries its type
      graph.initializers[node.outputs[i]] = std::move((*out)[i]);
    }
    ++folded;
  }
  graph.nodes = std::move(kept);
  return folded;
}

}  // namespace kiln::graph
