#include "compiler/graph/passes/eliminate_dead_nodes.h"

#include <unordered_set>

namespace kiln::graph {

int eliminate_dead_nodes(Graph& graph) {
  std::unordered_set<std::string> live(graph.outputs.begin(), graph.outputs.end());
  std::vector<bool> keep(graph.nodes.size(), false);
  // Walking backwards in topological order sees every consumer before its producers.
  for (size_t i = graph.nodes.size(); i-- > 0;) {
    const Node& node = graph.nodes[i];
    for (const std::string& out : node.outputs)
      keep[i] = keep[i] || (!out.empty() && live.count(out));
    if (!keep[i]) continue;
    live.insert(node.inputs.begin(), node.inputs.end());
    for (const Node& e : node.epilogue) live.insert(e.inputs.begin(), e.inputs.end());
  }
  std::vector<Node> kept;
  int removed = 0;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    if (keep[i]) {
      // Outputs no one reads (an unused optional output) stay: the operator still makes them.
      kept.push_back(std::move(graph.nodes[i]));
      for (const std::string& out : kept.back().outputs) live.insert(out);
    } else {
      ++removed;
    }
  }
  graph.nodes = std::move(kept);
  std::erase_if(graph.initializers, [&](const auto& kv) { return !live.count(kv.first); });
  live.insert(graph.inputs.begin(), graph.inputs.end());
  std::erase_if(graph.types, [&](const auto& kv) { return !live.count(kv.first); });
  return removed;
}

}  // namespace kiln::graph
