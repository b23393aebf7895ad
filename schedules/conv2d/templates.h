// The direct f32 conv2d templates on the blocked layout NCHW[x]c (direct.h), one per file:
// conv2d.nchwc, the general case (nchwc.cpp); conv2d.1x1, a GEMM over output pixels
// (one_by_one.cpp); conv2d.depthwise, groups == C == O (depthwise.cpp). The other conv2d
// templates declare their accessors in their own headers (depthwise_mult.h, lowp.h, amx.h,
// winograd.h); registry.cpp lists them all.
#pragma once

#include "schedules/conv2d/common.h"
#include "schedules/op_template.h"

namespace kiln::schedules {

const OpTemplate& conv2d_nchwc_template();
const OpTemplate& conv2d_1x1_template();
const OpTemplate& conv2d_depthwise_template();

// Depthwise weights [C, 1, KH, KW] -> [C/bn, KH, KW, bn], zero-padded: conv2d.depthwise's
// layout, which conv2d.int8.depthwise shares.
Values pack_depthwise_weight(const Values& wv, const Conv2dParams& p, int64_t bn);

}  // namespace kiln::schedules
