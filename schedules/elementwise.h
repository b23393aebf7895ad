// Broadcast elementwise: out[i, j] = relu(a[i, j] * scale[j] + bias[j]) — a binary
// operation with a trailing-dimension broadcast followed by a unary one, the shape of a
// fused batch-norm + activation. More elementwise operators arrive with the operator
// library; this is the kernel the compiler core is checked on.
#pragma once

#include <cstdint>

#include "te/tensor.h"

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

}  // namespace kiln::schedules
