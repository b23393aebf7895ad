// 2-D convolution: what every conv2d template shares. Logical layout NCHW data, OIHW weights
// (O x C/groups x KH x KW):
//   out[n, o, y, x] = Σ_{c, ky, kx} pad(data)[n, g*C/G + c, y*sh + ky*dh, x*sw + kx*dw]
//                                   · w[o, c, ky, kx],      g = o / (O/G)
// The workload "conv2d" has params N, C, H, W, O, KH, KW and optionally stride (or SH/SW),
// pad (or PH/PW), dilation (or DH/DW) and groups; dtypes f32, f16, bf16 with f32
// accumulation and the output in the input type; epilogues from epilogue.h (bias over O).
// Here: the workload's shape (Conv2dParams), its reference, and Conv2dTemplate, the logical
// interface the templates derive from. The templates live beside this file, one per file:
// the direct ones on the blocked layout NCHW[x]c (direct.h; conv2d.nchwc, conv2d.1x1 and
// conv2d.depthwise declared in templates.h), depthwise_mult, lowp, amx and winograd;
// transpose.h is the op conv2d_transpose.
//
// conv2d_compute below is the older plain NCHW compute (symmetric pad, no dilation/groups)
// the schedule tests in kernels_test.cpp use.
#pragma once

#include <cstdint>

#include "schedules/op_template.h"
#include "compiler/te/tensor.h"

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

// The full shape of a "conv2d" workload, validated (UserError for zero/negative sizes,
// channels not divisible by groups, a kernel larger than the padded input).
struct Conv2dParams {
  int64_t n, c, h, w, o, kh, kw;
  int64_t sh = 1, sw = 1, ph = 0, pw = 0, dh = 1, dw = 1, groups = 1;
  int64_t out_h() const { return (h + 2 * ph - dh * (kh - 1) - 1) / sh + 1; }
  int64_t out_w() const { return (w + 2 * pw - dw * (kw - 1) - 1) / sw + 1; }
  double flops() const {
    return 2.0 * double(n) * double(o) * double(out_h()) * double(out_w()) *
           double(c / groups) * double(kh) * double(kw);
  }
};
Conv2dParams conv2d_params(const Workload& w);

// Grouped, dilated, asymmetric-stride reference in double on logical NCHW/OIHW values.
Values conv2d_reference(const Conv2dParams& p, const Values& data, const Values& weight);

// What every conv2d template shares: the logical interface (NCHW data, OIHW weights, the
// epilogue's inputs, NCHW output), the reference, and the epilogues. Direct (direct.h) and
// Winograd (winograd.cpp) templates derive from it and add their schedules.
class Conv2dTemplate : public OpTemplate {
 public:
  std::string op() const override { return "conv2d"; }
  std::vector<TensorSpec> inputs(const Workload& w) const override;
  TensorSpec output(const Workload& w) const override;
  Values reference(const Workload& w, const std::vector<Values>& in) const override;
  std::vector<std::string> epilogues() const override;
};

}  // namespace kiln::schedules
