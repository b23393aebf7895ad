// 2-D convolution in NCHW layout with OIHW weights, any stride and symmetric zero padding:
//   out[n, o, y, x] = Σ_{c, ky, kx} pad(data)[n, c, y*stride + ky, x*stride + kx] · w[o, c, ky, kx]
// The padding is its own stage ("pad"), so a schedule can inline it or compute it at a
// loop of the convolution.
#pragma once

#include <cstdint>

#include "te/tensor.h"

namespace kiln::schedules {

struct Conv2dShape {
  int64_t n, c, h, w;   // input
  int64_t o, kh, kw;    // output channels, kernel size
  int64_t stride = 1, pad = 0;
  int64_t out_h() const { return (h + 2 * pad - kh) / stride + 1; }
  int64_t out_w() const { return (w + 2 * pad - kw) / stride + 1; }
  double flops() const {
    return 2.0 * double(n) * double(o) * double(out_h()) * double(out_w()) * double(c) *
           double(kh) * double(kw);
  }
};

struct Conv2dOp {
  te::Tensor data, weight, pad, out;
};

Conv2dOp conv2d_compute(const Conv2dShape& s, ir::DataType in = ir::DataType::f32(),
                        ir::DataType out = ir::DataType::f32());

void conv2d_reference(const Conv2dShape& s, const float* data, const float* weight, float* out);

}  // namespace kiln::schedules
