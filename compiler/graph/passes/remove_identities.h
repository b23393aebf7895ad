// Removal of nodes that pass a value through unchanged: Identity, inference-mode Dropout, a
// Cast to the type the value has, and x + 0, x - 0, x * 1, x / 1 with a constant of zeros or
// ones that does not broadcast x wider. Their consumers read the input directly.
// When the output is a graph output the producer's value is renamed to it instead, so graph
// outputs keep their names; the node stays only where neither works (an input or weight
// passed straight to an output, or a Dropout whose mask is read).
#pragma once

#include "compiler/graph/graph.h"

namespace kiln::graph {

// Returns the number of nodes removed.
int remove_identities(Graph& graph);

}  // namespace kiln::graph
