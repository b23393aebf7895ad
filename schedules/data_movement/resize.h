// Resize of the spatial axes of an NCHW tensor (ONNX Resize / Upsample, opsets 9-17):
// nearest and (bi)linear interpolation.
//
// Workload "resize": N, C, H, W, OH, OW; "linear" (0: nearest, 1: linear); "coord", the
// coordinate transformation (0 half_pixel, 1 pytorch_half_pixel, 2 align_corners,
// 3 asymmetric, 4 tf_half_pixel_for_nn); "nearest_mode" (0 round_prefer_floor,
// 1 round_prefer_ceil, 2 floor, 3 ceil); "scale_h", "scale_w": the scales (reals) the
// transformation divides by (ONNX's given scales; default output / input).
// An output element's source coordinate is computed in the kernel in f32 from its index, as
// ONNX defines it; linear interpolation clamps it into the input first, so the edges repeat.
// dtypes f32, f16, bf16 (interpolated in f32).
#pragma once

#include "schedules/op_template.h"

namespace kiln::schedules {

// "resize.direct": each output element reads its one (nearest) or four (linear) source
// elements; the channel loop is parallel.
const OpTemplate& resize_template();

}  // namespace kiln::schedules
