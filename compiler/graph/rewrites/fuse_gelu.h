// Recognises GELU written out as ONNX exporters write it, 0.5 * x * (1 + erf(x / sqrt 2))
// (the factors in any order, x / sqrt 2 also as x * (1 / sqrt 2)), and replaces the five or
// six nodes with one "Gelu" node (ONNX's opset-20 name), which the network compiler runs as
// one elementwise kernel (schedules' gelu) instead of five passes over the tensor.
#pragma once

#include "compiler/graph/graph.h"

namespace kiln::graph {

// Returns the number of GELUs fused.
int fuse_gelu(graph::Graph& graph);

}  // namespace kiln::graph
