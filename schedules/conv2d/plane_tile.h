// The plane tile of the direct blocked convolution (conv2d.nchwc's `ic_chunk` knob): for
// small output planes with many input channels (ResNet's 7x7 and 14x14 layers), the
// accumulators of a whole output plane of one output-channel block stay in a stack buffer
// while the reduction walks the input channels a chunk of blocks at a time, so each chunk
// of weights is loaded into L1 once and reused by every output row, instead of the whole
// weight panel of the block streaming from L2 again for each row (schedule_register_tile).
#pragma once

#include <vector>

#include "compiler/te/schedule.h"
#include "schedules/conv2d/blocked.h"

namespace kiln::schedules {

// `out` is [N, B, Y, X, bn] (the epilogue stage), `acc` its accumulation with reduction
// axes `reduce_order` (outermost first) of which `chunked` (the channel-block axis) is
// split by `chunk` and its outer part moved outside the plane's rows. Loops: n, b (fused,
// parallel as k.parallel asks; k.oc_inner does not apply), then per chunk the rows and
// reg_n-wide column tiles, each accumulated in registers over the chunk's reduction.
void schedule_plane_tile(te::Schedule& sch, const te::Tensor& out, const te::Tensor& acc,
                         const TileKnobs& k, const std::vector<ir::IterVar>& reduce_order,
                         const ir::IterVar& chunked, int64_t chunk);

}  // namespace kiln::schedules
