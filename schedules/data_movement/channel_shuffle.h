// "channel_shuffle.copy": ShuffleNet's channel shuffle, the concat of its inputs along the
// channels included, as one copy. The graph writes it Reshape [N, g, C/g, H, W] -> Transpose
// (0, 2, 1, 3, 4) -> Reshape [N, C, H, W], often after a Concat of two branches
// (compiler/graph/rewrites/fuse_channel_shuffle.h): output channel q * g + r is channel
// r * C/g + q of the concat. Run as those ops, the blocked convs around it pay a conversion
// out of their blocks, three copies and a conversion back; this reads the inputs in the
// blocks they are held in and writes the output in its own.
//
// Workload "channel_shuffle":
//   N, HW       images, and pixels per channel (H * W);
//   group       g >= 1; the channels C (the sum of the inputs') must divide by it;
//   block       the output's channel block b (1: NCHW), which must divide C;
//   inputs      k (1..kMaxConcatInputs), E0.. each input's channels, B0.. each input's block
//               (1: NCHW; a last block may be partial). Every input begins at a multiple of
//               C/g, so that each run of C/g channels the shuffle interleaves lies in one.
// Tensors: input i [N, ceil(E_i / B_i), HW, B_i], output [N, C / b, HW, b].
//
// Where b divides into g runs of m = b / g >= 2 lanes (and m divides C/g and every input's
// block), each output vector of b channels is g loads of m neighbouring channels, one from
// each run, interleaved in registers. Otherwise each run is copied channel by channel:
// plane by plane in vectors where both sides are NCHW, element by element else.
#pragma once

#include "schedules/op_template.h"

namespace kiln::schedules {

const OpTemplate& channel_shuffle_template();

// Whether the kernel runs `w` by whole output vectors (the interleaving path above); false
// for a workload it runs channel by channel. UserError for a workload it refuses.
bool channel_shuffle_interleaves(const Workload& w);

}  // namespace kiln::schedules
