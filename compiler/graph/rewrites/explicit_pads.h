// Conv and pool padding in the one form the 2-D kernels take: the same explicit pads before
// and after each spatial axis.
//
// auto_pad SAME_UPPER / SAME_LOWER (Keras and TensorFlow exports) becomes the explicit pads
// ONNX defines for it, and VALID none. Where an axis pads more on one side (TensorFlow's SAME
// with stride 2 on an even size pads one row after and none before), the part both sides
// share stays on the node and the rest moves into a Pad node before it: zeros for a Conv
// and for an AveragePool that counts padding, -1e15 for a MaxPool (below any activation,
// and every window holds at least one real element since ONNX keeps pads under the kernel
// size). The Pad runs in the conv's blocked layout (lower_network.cpp), so it costs one copy.
// An AveragePool that does not count padding, and ConvTranspose, keep their pads (refused if
// asymmetric).
#pragma once

#include "compiler/graph/graph.h"

namespace kiln::graph {

// Returns the number of nodes rewritten.
int explicit_pads(graph::Graph& g);

}  // namespace kiln::graph
