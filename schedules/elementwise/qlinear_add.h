// QLinearAdd on a flat 8-bit tensor of `elements` (any layout, as both operands share it):
// ONNX Runtime's operator, and the QDQ chain DQ(a), DQ(b) -> Add -> Q, computed as those
// steps are in f32 so that the result is the same to the bit:
//   y = clamp(round_half_even(((a - a_zero) * a_scale + (b - b_zero) * b_scale) / y_scale)
//             + y_zero, lo, hi)
// One pass over 2 bytes in and 1 out, where the float chain wrote and read 4-byte values
// three times. Workload: op "qlinear_add", dtype u8 or i8 (all three tensors), params
// elements, a_zero, b_zero, y_zero (integers in dtype's range) and the reals a_scale, b_scale,
// y_scale.
#pragma once

#include <cstdint>

#include "schedules/op_template.h"

namespace kiln::schedules {

const OpTemplate& qlinear_add_template();

struct QLinearAddParams {
  double a_scale, b_scale, y_scale;
  int64_t a_zero, b_zero, y_zero;
};
Workload qlinear_add_workload(int64_t elements, ir::DataType type, const QLinearAddParams& p);

}  // namespace kiln::schedules
