// Recognises SiLU (swish) as exporters write it, x * Sigmoid(x) (the factors in either order),
// and replaces the two nodes with one "Silu" node: one elementwise kernel instead of two
// passes over the tensor, and after a conv or a Linear an epilogue step (fuse_epilogues), since
// the producer's output then has one reader. EfficientNet's and YOLO's activation.
#pragma once

#include "compiler/graph/graph.h"

namespace kiln::network {

// Returns the number of SiLUs fused.
int fuse_silu(graph::Graph& graph);

}  // namespace kiln::network
