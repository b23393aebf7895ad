// Max and Min of more than two inputs (ONNX's variadic forms) as chains of binary nodes, the
// form the elementwise kernels compute: Max(a, b, c) becomes Max(Max(a, b), c), each
// intermediate typed with the numpy broadcast of its inputs.
#pragma once

#include "compiler/graph/graph.h"

namespace kiln::graph {

// Returns the number of nodes split.
int split_variadic(graph::Graph& graph);

}  // namespace kiln::graph
