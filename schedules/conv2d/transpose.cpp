#include "schedules/conv2d/transpose.h"

#include "compiler/base/error.h"
#include "compiler/te/schedule.h"
#include "schedules/epilogue.h"

namespace kiln::schedules {

using ir::DataType;
using ir::Expr;
using ir::Var;

namespace {

struct TransposeConvShape {
  int64_t n, c, h, w, o, kh, kw, sh, sw, dh, dw, ph, pw, oh, ow, groups;
  int64_t c_per_group() const { return c / groups; }
  int64_t o_per_group() const { return o / groups; }
  std::vector<int64_t> out() const { return {n, o, oh, ow}; }
};

// OH / OW, or when absent the full output minus the pad at both ends, as ONNX's default.
int64_t output_extent(const Workload& w, const std::string& out, const std::string& in,
                      const std::string& k, const std::string& stride, const std::string& dil,
                      const std::string& pad) {
  if (w.params.count(out)) return w.param(out);
  return w.param_or(stride, 1) * (w.param(in) - 1) + w.param_or(dil, 1) * (w.param(k) - 1) + 1 -
         2 * w.param_or(pad, 0);
}

TransposeConvShape shape_of(const Workload& w) {
  TransposeConvShape s{w.param("N"),
                       w.param("C"),
                       w.param("H"),
                       w.param("W"),
                       w.param("O"),
                       w.param("KH"),
                       w.param("KW"),
                       w.param_or("SH", 1),
                       w.param_or("SW", 1),
                       w.param_or("DH", 1),
                       w.param_or("DW", 1),
                       w.param_or("PH", 0),
                       w.param_or("PW", 0),
                       output_extent(w, "OH", "H", "KH", "SH", "DH", "PH"),
                       output_extent(w, "OW", "W", "KW", "SW", "DW", "PW"),
                       w.param_or("groups", 1)};
  for (int64_t v :
       {s.n, s.c, s.h, s.w, s.o, s.kh, s.kw, s.sh, s.sw, s.dh, s.dw, s.oh, s.ow, s.groups})
    user_check(v > 0) << "conv2d_transpose: every extent, stride, dilation and groups must be "
                         "positive in "
                      << w.str();
  user_check(s.c % s.groups == 0 && s.o % s.groups == 0)
      << "conv2d_transpose: groups " << s.groups << " must divide C " << s.c << " and O " << s.o;
  return s;
}

class Conv2dTranspose : public OpTemplate {
 public:
  std::string name() const override { return "conv2d_transpose.direct"; }
  std::string op() const override { return "conv2d_transpose"; }
  bool applies(const Workload& w, const Target&) const override { return w.op == op(); }
  std::vector<std::string> epilogues() const override { return epilogue_names(); }

  ConfigSpace space(const Workload& w, const Target&) const override {
    shape_of(w);
    ConfigSpace cs;
    cs.define_knob("parallel", {0, 1});
    cs.define_knob("unroll_kw", {0, 1});  // unroll the kernel-column taps
    return cs;
  }
  Config fallback(const Workload& w, const Target&) const override {
    TransposeConvShape s = shape_of(w);
    double work = double(s.n * s.o * s.oh * s.ow) * double(s.c_per_group() * s.kh * s.kw);
    return Config({{"parallel", work > 1e5 ? 1 : 0}, {"unroll_kw", s.kw <= 4 ? 1 : 0}});
  }

  std::vector<TensorSpec> inputs(const Workload& w) const override {
    TransposeConvShape s = shape_of(w);
    std::vector<TensorSpec> in = {{"data", {s.n, s.c, s.h, s.w}},
                                  {"weight", {s.c, s.o_per_group(), s.kh, s.kw}}};
    for (TensorSpec& e : epilogue_inputs(w, s.o, s.out())) in.push_back(std::move(e));
    return in;
  }
  TensorSpec output(const Workload& w) const override { return {"out", shape_of(w).out()}; }

  Values reference(const Workload& w, const std::vector<Values>& in) const override {
    TransposeConvShape s = shape_of(w);
    std::vector<double> acc(static_cast<size_t>(s.n * s.o * s.oh * s.ow), 0.0);
    for (int64_t n = 0; n < s.n; ++n)
      for (int64_t c = 0; c < s.c; ++c) {
        const int64_t g = c / s.c_per_group();
        for (int64_t iy = 0; iy < s.h; ++iy)
          for (int64_t ix = 0; ix < s.w; ++ix) {
            const double x = in[0][static_cast<size_t>(((n * s.c + c) * s.h + iy) * s.w + ix)];
            for (int64_t oc = 0; oc < s.o_per_group(); ++oc)
              for (int64_t ky = 0; ky < s.kh; ++ky)
                for (int64_t kx = 0; kx < s.kw; ++kx) {
                  const int64_t oy = iy * s.sh - s.ph + ky * s.dh,
                                ox = ix * s.sw - s.pw + kx * s.dw;
                  if (oy < 0 || oy >= s.oh || ox < 0 || ox >= s.ow) continue;
                  const int64_t o = g * s.o_per_group() + oc;
                  const double wv =
                      in[1]
                        [static_cast<size_t>(((c * s.o_per_group() + oc) * s.kh + ky) * s.kw + kx)];
                  acc[static_cast<size_t>(((n * s.o + o) * s.oh + oy) * s.ow + ox)] += x * wv;
                }
          }
      }
    std::vector<const Values*> epilogue_in;
    for (size_t i = 2; i < in.size(); ++i) epilogue_in.push_back(&in[i]);
    Values out(acc.size());
    for (size_t f = 0; f < acc.size(); ++f) {
      const int64_t channel = static_cast<int64_t>(f) / (s.oh * s.ow) % s.o;
      out[f] = static_cast<float>(
          apply_epilogue_reference(w, epilogue_in, acc[f], channel, static_cast<int64_t>(f)));
    }
    return out;
  }

 protected:
  ScheduledKernel schedule(const Workload& w, const Target&, const Config& cfg) const override {
    TransposeConvShape s = shape_of(w);
    const DataType f32 = DataType::f32();
    te::Tensor x = te::placeholder({s.n, s.c, s.h, s.w}, w.dtype, "data");
    te::Tensor wt = te::placeholder({s.c, s.o_per_group(), s.kh, s.kw}, w.dtype, "weight");
    const std::vector<int64_t> out_shape = s.out();
    EpilogueTensors epi = make_epilogue_placeholders(w, s.o, {out_shape.begin(), out_shape.end()});
    ir::IterVar rc = te::reduce_axis(s.c_per_group(), "rc");
    ir::IterVar ry = te::reduce_axis(s.kh, "ry");
    ir::IterVar rx = te::reduce_axis(s.kw, "rx");
    // The input index along one axis that reaches output `o` through tap `k`, and whether it
    // exists: t = o + pad - k * dilation must be a non-negative multiple of the stride below
    // stride * extent.
    auto source = [](Expr o, Expr k, int64_t pad, int64_t dil, int64_t stride, int64_t extent) {
      Expr t = o + pad - k * dil;
      Expr valid = t >= 0 && t < stride * extent;
      if (stride > 1) valid = valid && (t % stride) == 0;
      Expr index = ir::min(ir::max(t, Expr(0)) / stride, Expr(extent - 1));
      return std::pair{index, valid};
    };
    te::Tensor acc = te::compute(
        {s.n, s.o, s.oh, s.ow},
        [&](Var n, Var o, Var oy, Var ox) {
          auto [iy, vy] = source(oy, ry->var, s.ph, s.dh, s.sh, s.h);
          auto [ix, vx] = source(ox, rx->var, s.pw, s.dw, s.sw, s.w);
          Expr group = o / s.o_per_group();
          Expr c = group * s.c_per_group() + rc->var;
          Expr prod = ir::make_cast(f32, x(n, c, iy, ix)) *
                      ir::make_cast(f32, wt(c, o % s.o_per_group(), ry->var, rx->var));
          return te::sum(ir::make_select(vy && vx, prod, ir::make_zero(f32)), {rc, ry, rx});
        },
        "out.acc");
    te::Tensor out = te::compute(
        {s.n, s.o, s.oh, s.ow},
        [&](Var n, Var o, Var oy, Var ox) {
          return ir::make_cast(w.dtype,
                               apply_epilogue(w, epi, acc(n, o, oy, ox), {n, o, oy, ox}, o));
        },
        "out");
    te::Schedule sch({out});
    te::Stage st = sch[out];
    ir::IterVar planes = st.fuse(st.axis(0), st.axis(1));
    if (cfg["parallel"]) st.parallel(planes);
    te::Stage a = sch[acc];
    a.set_scope(ir::MemScope::Local);
    a.compute_at(st, st.axis(3));  // one accumulator per output element
    if (cfg["unroll_kw"]) a.unroll(a.reduce_axis(2));
    return logical_kernel(
        std::move(sch), with_epilogue_args({x, wt}, epi, out), inputs(w), output(w),
        2.0 * double(s.n * s.o * s.oh * s.ow) * double(s.c_per_group() * s.kh * s.kw));
  }
};

}  // namespace

const OpTemplate& conv2d_transpose_template() {
  static const Conv2dTranspose t;
  return t;
}

}  // namespace kiln::schedules
