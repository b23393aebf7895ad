// Shape inference: gives every value of a bound graph (bind.h) a concrete element type and
// shape, node by node in topological order. Shape arguments computed from shapes (the
// Shape -> Gather -> Concat -> Reshape chains exporters write) are evaluated on the way,
// so their consumers see constants; a shape that depends on input data is a UserError.
#pragma once

#include "compiler/graph/graph.h"

namespace kiln::graph {

void infer_shapes(Graph& graph);

}  // namespace kiln::graph
