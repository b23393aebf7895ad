// Recognises the channel shuffle as exporters write it (ShuffleNet's channel_shuffle in
// PyTorch, and ShuffleNet-V1/V2 ports elsewhere):
//   Reshape x [N, C, d...] -> [N, g, C/g, d...] -> Transpose (0, 2, 1, 3, ...)
//     -> Reshape back to [N, C, d...]
// and replaces it with one "ChannelShuffle" node (attribute "group": g): output channel
// q * g + r is channel r * C/g + q of x. When x is a channel Concat read by nothing else and
// every input of it begins at a multiple of C/g (ShuffleNet-V2's two branches), the Concat
// is folded in: the node takes the Concat's inputs and shuffles their concatenation.
//
// One copy instead of five steps, and one the network compiler runs on the blocked NCHW[x]c
// layout of the convs around it (schedules/data_movement/channel_shuffle.h).
#pragma once

#include "compiler/graph/graph.h"

namespace kiln::graph {

// Returns the number of shuffles fused.
int fuse_channel_shuffle(graph::Graph& graph);

}  // namespace kiln::graph
