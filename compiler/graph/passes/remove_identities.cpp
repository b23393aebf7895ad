#include "compiler/graph/passes/remove_identities.h"

#include <algorithm>

namespace kiln::graph {

namespace {

bool is_output(const Graph& graph, const std::string& name) {
  return std::find(graph.outputs.begin(), graph.outputs.end(), name) != graph.outputs.end();
}

bool is_input(const Graph& graph, const std::string& name) {
  return std::find(graph.inputs.begin(), graph.inputs.end(), name) != graph.inputs.end();
}

bool is_read(const Graph& graph, const std::string& name) {
  for (const Node& n : graph.nodes) {
    if (std::find(n.inputs.begin(), n.inputs.end(), name) != n.inputs.end()) return true;
    for (const Node& e : n.epilogue)
      if (std::find(e.inputs.begin(), e.inputs.end(), name) != e.inputs.end()) return true;
  }
  return is_output(graph, name);
}

// Every read of `from` (node inputs, epilogue inputs) reads `to` instead.
void replace_uses(Graph& graph, const std::string& from, const std::string& to) {
  for (Node& n : graph.nodes) {
    std::replace(n.inputs.begin(), n.inputs.end(), from, to);
    for (Node& e : n.epilogue) std::replace(e.inputs.begin(), e.inputs.end(), from, to);
  }
}

// Whether constant `value` holds `v` in every element.
bool is_filled_with(const Graph& graph, const std::string& value, double v) {
  auto it = graph.initializers.find(value);
  if (it == graph.initializers.end()) return false;
  for (double x : it->second.to_f64())
    if (x != v) return false;
  return true;
}

// The input a node passes through unchanged, or -1: Identity, inference Dropout, a Cast to
// the type its input has, and arithmetic with a constant that changes nothing (x + 0, x - 0,
// x * 1, x / 1: exporters write scale factors of 1 and baddbmm's beta-0 term so) as long as
// the result has the input's shape and type (the constant does not broadcast it wider).
// x + 0 differs from x only for x = -0, which becomes +0.
int passed_through(const Graph& graph, const Node& node) {
  if (!node.epilogue.empty() || !node.has_input(0) || !node.has_output(0)) return -1;
  const std::string& op = node.op_type;
  if (op == "Identity" || op == "Dropout") return 0;
  const std::optional<ValueType> out = graph.type_of(node.outputs[0]);
  auto same_as_out = [&](int k) {
    const std::optional<ValueType> t = graph.type_of(node.inputs[k]);
    return out && t && t->is_concrete() && *t == *out;
  };
  if (op == "Cast") return same_as_out(0) ? 0 : -1;
  if (node.inputs.size() != 2 || !node.has_input(1)) return -1;
  for (int k : {0, 1}) {
    const std::string& other = node.inputs[1 - k];
    const bool neutral =
        ((op == "Add" || (op == "Sub" && k == 0)) && is_filled_with(graph, other, 0)) ||
        ((op == "Mul" || (op == "Div" && k == 0)) && is_filled_with(graph, other, 1));
    if (neutral && same_as_out(k)) return k;
  }
  return -1;
}

}  // namespace

int remove_identities(Graph& graph) {
  int removed = 0;
  for (size_t i = 0; i < graph.nodes.size();) {
    const Node& node = graph.nodes[i];
    const int through = passed_through(graph, node);
    if (through < 0 || (node.has_output(1) && is_read(graph, node.outputs[1]))) {
      ++i;
      continue;
    }
    const std::string in = node.inputs[through], out = node.outputs[0];
    if (is_output(graph, out)) {
      // Keep the output's name: the producer of `in` writes `out` directly, if `in` is a
      // node's value that is not itself an output.
      if (is_input(graph, in) || graph.is_constant(in) || is_output(graph, in)) {
        ++i;
        continue;
      }
      for (Node& n : graph.nodes) std::replace(n.outputs.begin(), n.outputs.end(), in, out);
      replace_uses(graph, in, out);
      graph.types.erase(in);
    } else {
      replace_uses(graph, out, in);
      graph.types.erase(out);
    }
    graph.nodes.erase(graph.nodes.begin() + i);
    ++removed;
  }
  return removed;
}

}  // namespace kiln::graph
