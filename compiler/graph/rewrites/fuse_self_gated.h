// Recognises the self-gated activations as exporters write them, x times a function of x,
// and replaces the nodes with one:
//   x * Sigmoid(x)          -> "Silu" (EfficientNet's, YOLOv5's);
//   x * Tanh(Softplus(x))   -> "Mish" (YOLOv4's, as PyTorch exports it before opset 18);
//   x * HardSigmoid(x)      -> "HardSwish" when alpha is 1/6 (MobileNetV3's, before opset 14);
// the factors in either order. One elementwise kernel instead of two or three passes over the
// tensor, and after a conv or a Linear an epilogue step (fuse_epilogues), since the
// producer's output then has one reader.
#pragma once

#include "compiler/graph/graph.h"

namespace kiln::graph {

// Returns the number of activations fused.
int fuse_self_gated(graph::Graph& graph);

}  // namespace kiln::graph
