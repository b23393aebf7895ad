#include "compiler/graph/rewrites/graph_uses.h"

namespace kiln::graph {

std::map<std::string, int> count_uses(const graph::Graph& graph) {
  std::map<std::string, int> uses;
  for (const graph::Node& n : graph.nodes) {
    for (const std::string& v : n.inputs)
      if (!v.empty()) ++uses[v];
    for (const graph::Node& e : n.epilogue)
      for (const std::string& v : e.inputs)
        if (!v.empty()) ++uses[v];
  }
  for (const std::string& v : graph.outputs) ++uses[v];
  return uses;
}

void erase_unread_initializers(graph::Graph& graph) {
  const std::map<std::string, int> uses = count_uses(graph);
  for (auto it = graph.initializers.begin(); it != graph.initializers.end();)
    it = uses.count(it->first) ? std::next(it) : graph.initializers.erase(it);
}

int producer_of(const graph::Graph& graph, const std::string& value) {
  for (size_t i = 0; i < graph.nodes.size(); ++i)
    for (const std::string& o : graph.nodes[i].outputs)
      if (o == value) return static_cast<int>(i);
  return -1;
}

int replace_nodes(graph::Graph& graph,
                  const std::function<bool(graph::Node&, std::vector<graph::Node>&)>& replace) {
  int replaced = 0;
  std::vector<graph::Node> out;
  for (graph::Node& n : graph.nodes) {
    if (replace(n, out)) {
      ++replaced;
      continue;
    }
    out.push_back(std::move(n));
  }
  graph.nodes = std::move(out);
  return replaced;
}

}  // namespace kiln::graph
