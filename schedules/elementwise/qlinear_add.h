// QLinearAdd on a flat 8-bit tensor of `elements` (any layout, as both operands share it), as
// ONNX Runtime's kernel computes it: each operand times its ratio to the output scale, the
// zero points folded into one offset, two fused multiply-adds and no division,
//   y = clamp(round_half_even(fma(a, a_ratio, fma(b, b_ratio, offset))), lo, hi)
// (compiler/graph/ops/quantized_contrib.h derives the ratios and the offset). One pass over 2
// bytes in and 1 out, where the QDQ chain wrote and read 4-byte values three times.
// Workload: op "qlinear_add", dtype u8 or i8 (all three tensors), params elements and the
// reals a_ratio, b_ratio, offset.
#pragma once

#include <cstdint>

#include "schedules/op_template.h"

namespace kiln::schedules {

const OpTemplate& qlinear_add_template();

struct QLinearAddParams {
  double a_ratio, b_ratio, offset;  // each an f32 value
};
Workload qlinear_add_workload(int64_t elements, ir::DataType type, const QLinearAddParams& p);

}  // namespace kiln::schedules
