// ONNX Runtime's com.microsoft quantized operators, as its quantizer writes them in the
// QOperator form (QLinearAdd, QLinearMul, QLinearSigmoid, QLinearLeakyRelu,
// QLinearGlobalAveragePool, QLinearAveragePool, QLinearConcat, QGemm). Each is defined as the
// float operator it stands for between DequantizeLinear of its 8-bit operands and
// QuantizeLinear of its result, which is how the reference evaluator computes it and how the
// graph rewrite quantized_contrib expands it (ONNX Runtime's own kernels requantize integer
// sums, so they may differ from this by a rounding, as its QDQ form of the same model does).
// Two are computed as ONNX Runtime's kernels compute them, since kiln has kernels for them:
// QLinearAdd (its scaled sum, below) and QGemm with an output scale (exact integer sums
// requantized per column, graph/ops/quantize.h).
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

// ONNX Runtime's QLinearAdd kernel on x86 (MLAS) scales each operand by its ratio to the
// output scale and adds in fused f32 steps, and that is what a com.microsoft QLinearAdd
// computes in kiln, on every target:
//   y = saturate(round_half_even(fma(a, a_ratio, fma(b, b_ratio, offset))))
// with a_ratio = f32(a_scale) / f32(y_scale), b_ratio likewise, and
// offset = y_zero - fma(a_ratio, a_zero, b_ratio * b_zero), each step rounded to f32. Its QDQ
// transformer makes the same QLinearAdd of DQ(a), DQ(b) -> Add -> Q, and so does kiln's
// (compiler/graph/rewrites/quantized_elementwise.h).
struct ScaledAdd {
  float a_ratio, b_ratio, offset;
};
ScaledAdd qlinear_add_ratios(double a_scale, double b_scale, double y_scale, int64_t a_zero,
                             int64_t b_zero, int64_t y_zero);
// The rounded sum of 8-bit values a and b (before saturation).
int64_t scaled_add(const ScaledAdd& s, int64_t a, int64_t b);

// Whether `op_type` is one of these operators.
bool is_quantized_contrib_op(const std::string& op_type);
// Their names, sorted.
std::vector<std::string> quantized_contrib_ops();
// The parts of contrib node `n` (its op type one of these).
QuantizedContribParts quantized_contrib_parts(const Node& n);

}  // namespace kiln::graph
