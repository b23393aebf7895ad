// Folding inference-mode BatchNormalization into the Conv that feeds it: with
// s = scale / sqrt(var + eps), the Conv's weights become W * s (per output channel) and its
// bias (b - mean) * s + beta, and the BatchNormalization node disappears. Done when the Conv's
// weights (and bias, if any) are constants and the BatchNormalization is the Conv output's only
// reader; any other BatchNormalization stays and becomes a batch_norm kernel.
#pragma once

#include "compiler/graph/graph.h"

namespace kiln::network {

// Returns the number of BatchNormalization nodes folded.
int fold_batch_norm(graph::Graph& graph);

// The inference-mode BatchNormalizations left (constant statistics, f32 data): DenseNet's and
// pre-activation ResNets' BN -> ReLU before a conv, a BN after a Concat or an Add) as
// "ScaleShift" nodes: y = x * scale + shift along axis 1, scale = gamma / sqrt(var + eps) and
// shift = beta - mean * scale computed here, each a constant of shape [C, 1, ...] (the data's
// rank less one, so that it broadcasts along axis 1). A ScaleShift is an elementwise kernel
// (mul, add, and the activation fuse_epilogues gives it), which runs in the blocked layout of
// the convs around it, where batch_norm.nchw made each one cost two layout conversions.
// Returns the number of nodes rewritten.
int batch_norms_to_scale_shifts(graph::Graph& graph);

}  // namespace kiln::network
