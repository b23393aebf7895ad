// QuantizeLinear and DequantizeLinear with one scale and zero point per tensor, on a flat
// tensor of `elements` (any layout: the maps are elementwise), exactly as ONNX defines them
// and ONNX Runtime computes them in f32:
//   quantize.flat    op "quantize":   y = clamp(round_half_even(x / scale) + zero, lo, hi)
//   dequantize.flat  op "dequantize": y = (x - zero) * scale
// Workload: dtype u8 or i8 (the quantized side), params elements, scale (a real: the
// tensor's f32 scale, exact), zero (an integer in dtype's range).
#pragma once

#include <cstdint>

#include "schedules/op_template.h"

namespace kiln::schedules {

const OpTemplate& quantize_template();
const OpTemplate& dequantize_template();

// QuantizeLinear of the f32 value `x` to `type` (u8 or i8), as ONNX defines it in f32:
// divided by the scale, not multiplied by 1/scale, rounded half to even once, saturated.
ir::Expr quantize_linear_expr(ir::Expr x, double scale, int64_t zero, ir::DataType type);

// The workload of `op` ("quantize" or "dequantize") for a tensor of `elements`.
Workload quantize_workload(const std::string& op, int64_t elements, ir::DataType quantized,
                           double scale, int64_t zero);

}  // namespace kiln::schedules
