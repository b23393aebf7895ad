// Concat along channels in the blocked NCHW[b]c layout of the conv kernels. Inception,
// DenseNet and YOLO-style blocks concatenate conv outputs and feed the result to convs; with
// a concat that only reads and writes NCHW every input is converted out of its blocks and
// the result back into them. When every input's channel count is a multiple of the block,
// NCHW[b]c of the concat is the concat of the inputs' NCHW[b]c along the channel-block axis:
// the rank-5 concat [N, C/b, H, W, b] on axis 1, whose runs (C_k/b * H * W * b elements per
// image) concat.copy copies whole.
#pragma once

#include <optional>

#include "network/kernel_layout.h"
#include "schedules/op_template.h"

namespace kiln::network {

// The rank-5 workload of map_concat's rank-4 channel concat `w` over NCHW[block]c; nothing
// when `w` is not a rank-4 concat on axis 1, block <= 0, or an input's channels are not a
// multiple of the block (its padded channels would land inside the output's real ones).
std::optional<schedules::Workload> blocked_concat(const schedules::Workload& w, Layout block);

}  // namespace kiln::network
