// What the int8 templates (dense.int8, conv2d.int8, and for the range quantize.flat) share: the workload parameters of an
// integer operator with 8-bit data and the requantizing epilogue, as ONNX's QLinearConv and
// QLinearMatMul define it and ONNX Runtime computes it:
//   y = clamp(round_half_even(f32(sum) * scale[channel]) + y_zero, y_lo, y_hi)
// where sum is the exact int32 Σ (a - a_zero) * w (+ an int32 bias), scale the f32 product
// of the input scales over the output scale (the caller computes it in f32, as ONNX Runtime
// does), and [y_lo, y_hi] the output type's range unless a fused Relu/Clip narrows it.
//
// Parameters: a_zero (the data's zero point), requantize (1: output in the workload's dtype,
// the default; 0: the int32 sum, as MatMulInteger and ConvInteger give), y_zero, y_lo, y_hi.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/ir/expr.h"
#include "schedules/op_template.h"

namespace kiln::schedules {

// The range of u8 or i8; UserError naming the workload for any other dtype.
struct Int8Range {
  int64_t lo, hi;
};
Int8Range int8_range(const Workload& w);

struct Requantize {
  int64_t a_zero = 0;
  bool requantize = true;
  int64_t y_zero = 0, y_lo = 0, y_hi = 0;
};

// The workload's, checked against its dtype (u8 or i8): UserError naming what is out of range.
Requantize requantize_params(const Workload& w);
// The parameters that are values (may be negative), for OpTemplate::value_params.
std::vector<std::string> requantize_value_params();
// The output type: the workload's dtype, or i32 with requantize=0.
ir::DataType int8_output_type(const Workload& w);
// The int32 sum (bias included) as the output type.
ir::Expr requantize_expr(const Requantize& r, ir::DataType out, ir::Expr sum, ir::Expr scale);
// The same on the host, for the references: `sum` an exact integer.
float requantize_reference(const Requantize& r, double sum, float scale);

}  // namespace kiln::schedules
