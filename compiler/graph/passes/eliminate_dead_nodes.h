// Dead-node elimination: drops nodes none of whose outputs reach a graph output, and
// initializers and types that nothing uses any more (folding leaves many behind).
#pragma once

#include "compiler/graph/graph.h"

namespace kiln::graph {

// Returns the number of nodes removed.
int eliminate_dead_nodes(Graph& graph);

}  // namespace kiln::graph
