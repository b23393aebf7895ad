// Conversion between f32 and another element type, element by element over a flat buffer.
// The network compiler puts it at two kinds of edges:
//  - of a low-precision region (f16, bf16; network/assign_precision.h): a flat
//    buffer because a cast changes no layout, it converts an NCHW[x]c activation in place
//    of its logical shape;
//  - of the network, for model inputs and outputs of type int64, int32 or bool: every
//    computed value is held in f32 inside (integers and truth values included: exact up to
//    2^24), so such an input is converted once where a kernel first reads it and such an
//    output is written by a conversion from its f32 value.
//
// Workload "cast": param `elements`; dtype the other type (f16, bf16, i64, i32, or u8 for
// bool: one byte, 0 or 1); param `to_f32` 1 converts that type to f32 (exact), 0 converts
// f32 to it: to a half type rounding to nearest even, to an integer toward zero, to bool 1
// where the value is non-zero.
#pragma once

#include "compiler/te/schedule.h"
#include "schedules/op_template.h"

namespace kiln::schedules {

// "cast.flat": a vectorized loop over the elements, parallel in large chunks when big.
// Registered for the half types (the template sweeps draw one dtype per workload, which
// fits them); the integer forms are reached through cast_workload by the network compiler.
const OpTemplate& cast_template();

// The workload of a cast of `elements` values between f32 and `other`.
Workload cast_workload(int64_t elements, ir::DataType other, bool to_f32);

// The knob of a flat conversion (cast.flat, quantize.flat, qlinear_add.flat): parallel or
// not; and its default, parallel past about 64 KiB of f32 (where the copy kernels find threads
// pay for themselves).
ConfigSpace flat_conversion_space();
Config flat_conversion_fallback(const Workload& w);

// The loop of a flat conversion stage (cast.flat, quantize.flat): vectors of the target's f32
// lanes, four at a time, in parallel chunks when `parallel`.
void schedule_flat_conversion(te::Stage out, const Target& t, bool parallel);

}  // namespace kiln::schedules
