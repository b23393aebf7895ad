// Pooling over the channel-blocked NCHW[b]c layout the conv kernels write. A network whose
// max pool follows a blocked conv (ResNet's stem) would otherwise convert to NCHW and back
// around it, which costs several times the pool itself; the same holds for the global
// average pool of every classifier head and of MobileNetV3's squeeze-excite blocks.
//
// Workloads are the NCHW templates' ("max_pool2d", "avg_pool2d", "global_avg_pool2d",
// pooling.h) with the same logical arguments and reference: the block is the config's
// `c_bn` knob and the arguments' pack/unpack say it (kernel_layout.h reads it from them), as
// for the blocked convs. Each channel block is one vector: the window reduces whole blocks of
// `reg_w` output pixels in registers; padding is either a select per tap on clamped loads or
// a padded band of KH rows for one output row on the stack, never a padded copy of the
// whole input. Channels beyond C in the last block are whatever the producer wrote (zeros
// for a conv or a conversion) and pool to finite values.
#pragma once

#include "schedules/op_template.h"

namespace kiln::schedules {

// "max_pool2d.nchwc" and "avg_pool2d.nchwc".
const OpTemplate& max_pool2d_blocked_template();
const OpTemplate& avg_pool2d_blocked_template();
// "global_avg_pool2d.nchwc": each block's H*W pixels summed as `partials` interleaved
// vector accumulators.
const OpTemplate& global_avg_pool2d_blocked_template();

}  // namespace kiln::schedules
