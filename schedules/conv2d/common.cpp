// What every conv2d template shares (see common.h): the plain NCHW compute and its
// reference, the "conv2d" workload's validated shape and grouped/dilated reference, and
// Conv2dTemplate's logical interface (inputs, output, reference, epilogues).
#include "schedules/conv2d/common.h"

#include "compiler/base/error.h"
#include "schedules/epilogue.h"

namespace kiln::schedules {

using ir::DataType;
using ir::Expr;
using ir::Var;

Conv2dOp conv2d_compute(const Conv2dShape& s, DataType in, DataType out) {
  user_check(s.n > 0 && s.c > 0 && s.h > 0 && s.w > 0 && s.o > 0 && s.kh > 0 && s.kw > 0)
      << "conv2d: every dimension must be positive";
  user_check(s.stride > 0 && s.pad >= 0) << "conv2d: stride must be positive and pad >= 0";
  user_check(s.out_h() > 0 && s.out_w() > 0)
      << "conv2d: a " << s.kh << "x" << s.kw << " kernel does not fit a " << s.h << "x" << s.w
      << " input with padding " << s.pad;
  Conv2dOp op;
  op.data = te::placeholder({s.n, s.c, s.h, s.w}, in, "data");
  op.weight = te::placeholder({s.o, s.c, s.kh, s.kw}, in, "weight");
  const int64_t p = s.pad;
  if (p == 0) {
    op.pad = op.data;
  } else {
    op.pad = te::compute(
        {s.n, s.c, s.h + 2 * p, s.w + 2 * p},
        [&](Var n, Var c, Var y, Var x) {
          Expr inside = y >= p && y < s.h + p && x >= p && x < s.w + p;
          // Clamped indices keep the load in bounds on the lanes the select discards.
          Expr yy = ir::max(ir::min(y - p, Expr(s.h - 1)), Expr(0));
          Expr xx = ir::max(ir::min(x - p, Expr(s.w - 1)), Expr(0));
          return ir::make_select(inside, op.data(n, c, yy, xx), ir::make_zero(in));
        },
        "pad");
  }
  ir::IterVar rc = te::reduce_axis(s.c, "rc");
  ir::IterVar ry = te::reduce_axis(s.kh, "ry");
  ir::IterVar rx = te::reduce_axis(s.kw, "rx");
  DataType acc = DataType::f32();
  op.out = te::compute(
      {s.n, s.o, s.out_h(), s.out_w()},
      [&](Var n, Var o, Var y, Var x) {
        Expr a = ir::make_cast(acc, op.pad(n, rc, y * s.stride + ry->var, x * s.stride + rx->var));
        Expr b = ir::make_cast(acc, op.weight(o, rc, ry, rx));
        return te::sum(a * b, {rc, ry, rx});
      },
      "conv");
  if (out != acc) {
    te::Tensor c32 = op.out;
    op.out = te::compute(
        {s.n, s.o, s.out_h(), s.out_w()},
        [&](Var n, Var o, Var y, Var x) { return ir::make_cast(out, c32(n, o, y, x)); }, "conv.out");
  }
  return op;
}

void conv2d_reference(const Conv2dShape& s, const float* data, const float* weight, float* out) {
  const int64_t oh = s.out_h(), ow = s.out_w();
  for (int64_t n = 0; n < s.n; ++n)
    for (int64_t o = 0; o < s.o; ++o)
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t x = 0; x < ow; ++x) {
          double acc = 0;
          for (int64_t c = 0; c < s.c; ++c)
            for (int64_t ky = 0; ky < s.kh; ++ky)
              for (int64_t kx = 0; kx < s.kw; ++kx) {
                int64_t iy = y * s.stride + ky - s.pad, ix = x * s.stride + kx - s.pad;
                if (iy < 0 || iy >= s.h || ix < 0 || ix >= s.w) continue;
                acc += double(data[((n * s.c + c) * s.h + iy) * s.w + ix]) *
                       double(weight[((o * s.c + c) * s.kh + ky) * s.kw + kx]);
              }
          out[((n * s.o + o) * oh + y) * ow + x] = static_cast<float>(acc);
        }
}

// ---------------------------------------------------------------------------------------
// The "conv2d" workload: shape, reference, and the logical interface of its templates.

Conv2dParams conv2d_params(const Workload& w) {
  Conv2dParams p{w.param("N"), w.param("C"), w.param("H"), w.param("W"),
                 w.param("O"), w.param("KH"), w.param("KW")};
  int64_t stride = w.param_or("stride", 1), pad = w.param_or("pad", 0);
  int64_t dil = w.param_or("dilation", 1);
  p.sh = w.param_or("SH", stride), p.sw = w.param_or("SW", stride);
  p.ph = w.param_or("PH", pad), p.pw = w.param_or("PW", pad);
  p.dh = w.param_or("DH", dil), p.dw = w.param_or("DW", dil);
  p.groups = w.param_or("groups", 1);
  user_check(p.n > 0 && p.c > 0 && p.h > 0 && p.w > 0 && p.o > 0 && p.kh > 0 && p.kw > 0)
      << "conv2d: N, C, H, W, O, KH, KW must be positive, got " << w.str();
  user_check(p.sh > 0 && p.sw > 0) << "conv2d: stride must be positive, got " << w.str();
  user_check(p.dh > 0 && p.dw > 0) << "conv2d: dilation must be positive, got " << w.str();
  user_check(p.ph >= 0 && p.pw >= 0) << "conv2d: padding must be >= 0, got " << w.str();
  user_check(p.groups > 0) << "conv2d: groups must be positive, got " << p.groups;
  user_check(p.c % p.groups == 0 && p.o % p.groups == 0)
      << "conv2d: C (" << p.c << ") and O (" << p.o << ") must both be divisible by groups ("
      << p.groups << ")";
  int64_t ekh = p.dh * (p.kh - 1) + 1, ekw = p.dw * (p.kw - 1) + 1;
  user_check(ekh <= p.h + 2 * p.ph && ekw <= p.w + 2 * p.pw)
      << "conv2d: the " << p.kh << "x" << p.kw << " kernel (dilation " << p.dh << "x" << p.dw
      << ") is larger than the padded " << p.h + 2 * p.ph << "x" << p.w + 2 * p.pw << " input";
  return p;
}

Values conv2d_reference(const Conv2dParams& p, const Values& data, const Values& weight) {
  const int64_t oh = p.out_h(), ow = p.out_w(), cg = p.c / p.groups, og = p.o / p.groups;
  Values out(static_cast<size_t>(p.n * p.o * oh * ow));
  for (int64_t n = 0; n < p.n; ++n)
    for (int64_t o = 0; o < p.o; ++o)
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t x = 0; x < ow; ++x) {
          double acc = 0;
          for (int64_t ci = 0; ci < cg; ++ci) {
            int64_t c = o / og * cg + ci;
            for (int64_t ky = 0; ky < p.kh; ++ky)
              for (int64_t kx = 0; kx < p.kw; ++kx) {
                int64_t iy = y * p.sh + ky * p.dh - p.ph, ix = x * p.sw + kx * p.dw - p.pw;
                if (iy < 0 || iy >= p.h || ix < 0 || ix >= p.w) continue;
                acc += double(data[((n * p.c + c) * p.h + iy) * p.w + ix]) *
                       double(weight[((o * cg + ci) * p.kh + ky) * p.kw + kx]);
              }
          }
          out[((n * p.o + o) * oh + y) * ow + x] = static_cast<float>(acc);
        }
  return out;
}

std::vector<TensorSpec> Conv2dTemplate::inputs(const Workload& w) const {
  Conv2dParams p = conv2d_params(w);
  std::vector<TensorSpec> in = {{"data", {p.n, p.c, p.h, p.w}},
                                {"weight", {p.o, p.c / p.groups, p.kh, p.kw}}};
  auto extra = epilogue_inputs(w, p.o, {p.n, p.o, p.out_h(), p.out_w()});
  in.insert(in.end(), extra.begin(), extra.end());
  return in;
}

TensorSpec Conv2dTemplate::output(const Workload& w) const {
  Conv2dParams p = conv2d_params(w);
  return {"out", {p.n, p.o, p.out_h(), p.out_w()}};
}

Values Conv2dTemplate::reference(const Workload& w, const std::vector<Values>& in) const {
  Conv2dParams p = conv2d_params(w);
  Values out = conv2d_reference(p, in[0], in[1]);
  std::vector<const Values*> extra;
  for (size_t i = 2; i < in.size(); ++i) extra.push_back(&in[i]);
  const int64_t hw = p.out_h() * p.out_w();
  for (int64_t i = 0; i < static_cast<int64_t>(out.size()); ++i)
    out[i] = static_cast<float>(apply_epilogue_reference(w, extra, out[i], (i / hw) % p.o, i));
  return out;
}

std::vector<std::string> Conv2dTemplate::epilogues() const { return epilogue_names(); }

}  // namespace kiln::schedules
