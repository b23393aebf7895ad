// Who reads each value of a graph: what the network passes ask before they fold one node into
// another (a value read by one node only, and not a graph output, may vanish into it).
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "compiler/graph/graph.h"

namespace kiln::graph {

// Readers of each value (nodes and their epilogues), plus one for every graph output naming it.
std::map<std::string, int> count_uses(const graph::Graph& graph);

// Drops the initializers nothing reads any more (weights a pass replaced by rewritten copies).
void erase_unread_initializers(graph::Graph& graph);

// The index of the node that defines `value`, or -1 (an input or a constant).
int producer_of(const graph::Graph& graph, const std::string& value);

// Rebuilds the node list in order: `replace(n, out)` either appends n's replacement to `out`
// and returns true, or returns false having appended nothing, and n stays. Returns the number
// of nodes replaced.
int replace_nodes(graph::Graph& graph,
                  const std::function<bool(graph::Node&, std::vector<graph::Node>&)>& replace);

}  // namespace kiln::graph
