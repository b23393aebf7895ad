// QLinearAdd on a flat 8-bit tensor of `elements` (any layout, as both operands share it), in
// one of two roundings:
//  - float (the QDQ chain DQ(a), DQ(b) -> Add -> Q), computed as those steps are in f32 so
//    that the result is the same to the bit:
//      y = clamp(round_half_even(((a - a_zero) * a_scale + (b - b_zero) * b_scale) / y_scale)
//                + y_zero, lo, hi)
//  - fixed point (ONNX Runtime's QLinearAdd kernel), when the workload has `shift`:
//      y = clamp(round_half_away((a_mult * (a - a_zero) + b_mult * (b - b_zero)) / 2^shift)
//                + y_zero, lo, hi)
//    in int32, with no division (compiler/graph/ops/quantized_contrib.h derives the integers).
// One pass over 2 bytes in and 1 out, where the float chain wrote and read 4-byte values
// three times. Workload: op "qlinear_add", dtype u8 or i8 (all three tensors), params
// elements, a_zero, b_zero, y_zero (integers in dtype's range), the reals a_scale, b_scale,
// y_scale, and for fixed point shift, a_mult, b_mult.
#pragma once

#include <cstdint>

#include "schedules/op_template.h"

namespace kiln::schedules {

const OpTemplate& qlinear_add_template();

struct QLinearAddParams {
  double a_scale, b_scale, y_scale;
  int64_t a_zero, b_zero, y_zero;
  int64_t shift = 0, a_mult = 0, b_mult = 0;  // fixed point where shift > 0
};
Workload qlinear_add_workload(int64_t elements, ir::DataType type, const QLinearAddParams& p);

}  // namespace kiln::schedules
