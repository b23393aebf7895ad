// Elementwise operators: unary activations and math functions, binary operators with
// numpy broadcasting, and chains of them fused into one kernel (template
// "elementwise.flat.<op>", one instance per workload op; see elementwise_flat_template).
//
// Workloads. Unary ops: relu, clip, sigmoid, tanh, gelu, exp, log, sqrt, neg, abs,
// reciprocal, erf, leaky_relu, hard_sigmoid, hard_swish, silu (x sigmoid(x)), not, nonzero,
// trunc, copy. Binary ops: add,
// sub, mul, div, min, max, pow, prelu (b is the slope where a < 0), and the comparisons equal,
// less, greater, less_equal, greater_equal. Truth values are f32 masks: comparisons, not and
// nonzero give 1 or 0; "where" (the one ternary op, only as a workload op) gives b where a is
// non-zero, else c. trunc rounds toward zero (a float cast to an integer, held in f32).
// "elementwise_chain": the steps
// listed in Workload::epilogue, applied left to right to operand a; each binary step reads
// the next operand (b, c, ...). Any op may also carry further steps in its epilogue, which
// makes it a chain starting with that op. Shapes: "rank" (1..8, shared by every operand:
// pad with leading 1s as numpy would) and per operand "a0".."a{rank-1}", "b0", ...; every
// dimension is positive and each operand's is 1 or the output's; optional "o0".. give output
// dimensions larger than every operand's (a broadcast: copy with them is ONNX's Expand). clip reads the reals "lo" and
// "hi" (default 0 and 6, i.e. relu6). pow is exp(b log a):
// defined for a > 0 (a = 0 gives 0 for b > 0, inf for b < 0; a < 0 gives NaN). Inputs and
// output share the dtype (f32, f16, bf16); the arithmetic runs in f32 and rounds once.
// leaky_relu reads the real "alpha" (its slope, default 0.01), hard_sigmoid "alpha" and
// "beta" (max(0, min(1, alpha x + beta)), default 0.2 and 0.5); hard_swish
// is x * hard_sigmoid(x) with alpha 1/6 and beta 0.5, as ONNX defines it.
//
// Below: the older scale_bias_relu compute that the compiler core's tests use.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "schedules/op_template.h"
#include "compiler/te/tensor.h"

namespace kiln::schedules {

struct ElementwiseShape {
  int64_t rows, cols;
  double flops() const { return 3.0 * double(rows) * double(cols); }
};

struct ElementwiseOp {
  te::Tensor a, scale, bias, scaled, out;  // `scaled` is the intermediate a*scale + bias
};

ElementwiseOp scale_bias_relu_compute(const ElementwiseShape& s,
                                      ir::DataType dtype = ir::DataType::f32());

void scale_bias_relu_reference(const ElementwiseShape& s, const float* a, const float* scale,
                               const float* bias, float* out);

const std::vector<std::string>& elementwise_unary_ops();
const std::vector<std::string>& elementwise_binary_ops();
// Every workload op the elementwise templates implement (unary, binary, the chain).
const std::vector<std::string>& elementwise_ops();

// The template for one workload op; UserError naming the valid ops otherwise.
const OpTemplate& elementwise_flat_template(const std::string& op);

// One step on an f32 value: `x` for unary ops, `x` and `y` for binary ones. `w` supplies
// clip's bounds. Used by the templates and by fused epilogues of other operators.
ir::Expr elementwise_unary(const std::string& op, const ir::Expr& x, const Workload& w);
ir::Expr elementwise_binary(const std::string& op, const ir::Expr& x, const ir::Expr& y);
double elementwise_unary_reference(const std::string& op, double x, const Workload& w);
double elementwise_binary_reference(const std::string& op, double x, double y);

}  // namespace kiln::schedules
