// Conversion between f32 and a half-precision type (f16, bf16), element by element over a
// flat buffer: the kernel the network compiler puts at the edges of a low-precision region
// (compiler/network/assign_precision.h). A flat buffer because a cast changes no layout: it
// converts an NCHW[x]c activation in place of its logical shape.
//
// Workload "cast": param `elements`; dtype the half type; param `to_f32` 0 converts f32 to
// the half type (round to nearest even), 1 the half type to f32 (exact).
#pragma once

#include "schedules/op_template.h"

namespace kiln::schedules {

// "cast.flat": a vectorized loop over the elements, parallel in large chunks when big.
const OpTemplate& cast_template();

// The workload of a cast of `elements` values between f32 and `half`.
Workload cast_workload(int64_t elements, ir::DataType half, bool to_f32);

}  // namespace kiln::schedules
