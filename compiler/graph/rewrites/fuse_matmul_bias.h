// A MatMul by constant weights followed by the Add of a constant bias over its output columns
// (how exporters write nn.Linear on 3-D activations, where Gemm does not apply) becomes one
// MatMul node with the bias as a third input; the network compiler runs it as dense with a
// bias epilogue, and the epilogue fusion that follows can then fuse a Relu or a residual Add.
#pragma once

#include "compiler/graph/graph.h"

namespace kiln::graph {

// Returns the number of bias Adds fused.
int fuse_matmul_bias(graph::Graph& graph);

}  // namespace kiln::graph
