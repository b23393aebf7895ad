// ONNX Runtime's com.microsoft quantized operators, as its quantizer writes them in the
// QOperator form (QLinearAdd, QLinearMul, QLinearSigmoid, QLinearLeakyRelu,
// QLinearGlobalAveragePool, QLinearAveragePool, QLinearConcat, QGemm). Each is defined as the
// float operator it stands for between DequantizeLinear of its 8-bit operands and
// QuantizeLinear of its result, which is how the reference evaluator computes it and how the
// graph rewrite quantized_contrib expands it (ONNX Runtime's own kernels requantize integer
// sums, so they may differ from this by a rounding, as its QDQ form of the same model does).
#pragma once

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "compiler/graph/graph.h"

namespace kiln::graph {

// Where a contrib node's parts are among its inputs.
struct QuantizedContribParts {
  struct Operand {
    size_t value, scale, zero;  // input indices (the zero point may be omitted)
    int64_t axis = 1;           // the DequantizeLinear's axis for a per-axis scale
  };
  std::string float_op;                    // "Mul"
  std::vector<Operand> operands;           // the float op's inputs, in order
  std::optional<size_t> int32_bias;        // QGemm's C, in units of a_scale * b_scale
  std::optional<std::array<size_t, 2>> y;  // the output's scale and zero point; none: f32
  std::vector<std::string> float_attrs;    // the node's attributes the float op takes
};

// ONNX Runtime's QLinearAdd kernel (MLAS, x86 and ARM alike) adds in fixed point, and that is
// what a com.microsoft QLinearAdd computes in kiln too:
//   y = clamp(round_half_away((a_mult * (a - a_zero) + b_mult * (b - b_zero)) / 2^shift) + y_zero)
// with the integer multipliers the f32 ratios a_scale / y_scale, b_scale / y_scale scaled so
// that the greater has 22 bits. Nothing where a ratio lies outside [2^-14, 256): ONNX
// Runtime then adds the dequantized values in f32, as the QDQ chain does. A QLinearAdd that
// kiln's QDQ fusion writes carries rounding="float": the chain's f32 steps, exactly.
struct FixedPointAdd {
  int64_t shift, a_mult, b_mult;
};
std::optional<FixedPointAdd> qlinear_add_fixed_point(double a_scale, double b_scale,
                                                     double y_scale);
// The rounded quotient before the zero point, for (a - a_zero) and (b - b_zero).
int64_t fixed_point_add(const FixedPointAdd& f, int64_t a_centered, int64_t b_centered);

// Whether `op_type` is one of these operators.
bool is_quantized_contrib_op(const std::string& op_type);
// Their names, sorted.
std::vector<std::string> quantized_contrib_ops();
// The parts of contrib node `n` (its op type one of these).
QuantizedContribParts quantized_contrib_parts(const Node& n);

}  // namespace kiln::graph
