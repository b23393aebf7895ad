#include "schedules/conv2d.h"

#include "ir/error.h"

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

}  // namespace kiln::schedules
