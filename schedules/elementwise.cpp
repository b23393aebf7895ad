#include "schedules/elementwise.h"

#include <algorithm>

#include "ir/error.h"

namespace kiln::schedules {

using ir::DataType;
using ir::Expr;
using ir::Var;

ElementwiseOp scale_bias_relu_compute(const ElementwiseShape& s, DataType dtype) {
  user_check(s.rows > 0 && s.cols > 0) << "elementwise: shape must be positive";
  ElementwiseOp op;
  op.a = te::placeholder({s.rows, s.cols}, dtype, "a");
  op.scale = te::placeholder({s.cols}, dtype, "scale");
  op.bias = te::placeholder({s.cols}, dtype, "bias");
  DataType f32 = DataType::f32();
  op.scaled = te::compute(
      {s.rows, s.cols},
      [&](Var i, Var j) {
        return ir::make_cast(f32, op.a(i, j)) * ir::make_cast(f32, op.scale(j)) +
               ir::make_cast(f32, op.bias(j));
      },
      "scaled");
  op.out = te::compute(
      {s.rows, s.cols},
      [&](Var i, Var j) { return ir::make_cast(dtype, ir::max(op.scaled(i, j), ir::make_zero(f32))); },
      "out");
  return op;
}

void scale_bias_relu_reference(const ElementwiseShape& s, const float* a, const float* scale,
                               const float* bias, float* out) {
  for (int64_t i = 0; i < s.rows; ++i)
    for (int64_t j = 0; j < s.cols; ++j)
      out[i * s.cols + j] = std::max(0.0f, a[i * s.cols + j] * scale[j] + bias[j]);
}

}  // namespace kiln::schedules
