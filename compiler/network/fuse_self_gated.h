// Recognises the self-gated activations as exporters write them, x times a function of x,
// and replaces the nodes with one: SiLU (swish) x * Sigmoid(x), EfficientNet's and YOLOv5's,
// becomes "Silu", and Mish x * Tanh(Softplus(x)), YOLOv4's (PyTorch before opset 18), becomes
// "Mish"; the factors in either order. One elementwise kernel instead of two or three passes
// over the tensor, and after a conv or a Linear an epilogue step (fuse_epilogues), since the
// producer's output then has one reader.
#pragma once

#include "compiler/graph/graph.h"

namespace kiln::network {

// Returns the number of activations fused.
int fuse_self_gated(graph::Graph& graph);

}  // namespace kiln::network
