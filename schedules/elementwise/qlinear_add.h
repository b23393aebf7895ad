// QLinearAdd on a flat 8-bit tensor of `elements` (any layout, as both operands share it), in
// one of two roundings:
//  - the QDQ chain DQ(a), DQ(b) -> Add -> Q, computed as those steps are in f32 so that the
//    result is the same to the bit:
//      y = clamp(round_half_even(((a - a_zero) * a_scale + (b - b_zero) * b_scale) / y_scale)
//                + y_zero, lo, hi)
//  - ONNX Runtime's QLinearAdd kernel, when the workload has the reals a_ratio, b_ratio and
//    offset (compiler/graph/ops/quantized_contrib.h derives them):
//      y = clamp(round_half_even(fma(a, a_ratio, fma(b, b_ratio, offset))), lo, hi)
//    two fused multiply-adds and no division.
// One pass over 2 bytes in and 1 out, where the float chain wrote and read 4-byte values
// three times. Workload: op "qlinear_add", dtype u8 or i8 (all three tensors), params
// elements, a_zero, b_zero, y_zero (integers in dtype's range), the reals a_scale, b_scale,
// y_scale, and for ONNX Runtime's form a_ratio, b_ratio, offset.
#pragma once

#include <cstdint>

#include "schedules/op_template.h"

namespace kiln::schedules {

const OpTemplate& qlinear_add_template();

struct QLinearAddParams {
  double a_scale, b_scale, y_scale;
  int64_t a_zero, b_zero, y_zero;
  bool ratios = false;  // ONNX Runtime's scaled sum of the next three, else the QDQ chain
  double a_ratio = 0, b_ratio = 0, offset = 0;
};
Workload qlinear_add_workload(int64_t elements, ir::DataType type, const QLinearAddParams& p);

}  // namespace kiln::schedules
