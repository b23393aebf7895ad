// Split becomes one Slice node per output: the network compiler's kernels write one output
// each, and a slice per part is what a split kernel would do anyway.
#pragma once

#include "compiler/graph/graph.h"

namespace kiln::graph {

// Returns the number of Split nodes rewritten.
int split_to_slices(graph::Graph& graph);

}  // namespace kiln::graph
