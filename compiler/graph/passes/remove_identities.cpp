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

}  // namespace

int remove_identities(Graph& graph) {
  int removed = 0;
  for (size_t i = 0; i < graph.nodes.size();) {
    const Node& node = graph.nodes[i];
    const bool passes_through = (node.op_type == "Identity" || node.op_type == "Dropout") &&
                                node.epilogue.empty() && node.has_input(0) && node.has_output(0);
    if (!passes_through || (node.has_output(1) && is_read(graph, node.outputs[1]))) {
      ++i;
      continue;
    }
    const std::string in = node.inputs[0], out = node.outputs[0];
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
