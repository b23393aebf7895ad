#include "schedules/elementwise/batch_norm.h"

#include <array>
#include <cmath>

#include "compiler/base/error.h"
#include "compiler/te/schedule.h"

namespace kiln::schedules {

using ir::DataType;
using ir::Expr;
using ir::Var;

namespace {

class BatchNorm : public OpTemplate {
 public:
  std::string name() const override { return "batch_norm.nchw"; }
  std::string op() const override { return "batch_norm"; }
  bool applies(const Workload& w, const Target&) const override { return w.op == op(); }

  static std::array<int64_t, 4> shape(const Workload& w) {
    std::array<int64_t, 4> s = {w.param("N"), w.param("C"), w.param("H"), w.param("W")};
    user_check(s[0] > 0 && s[1] > 0 && s[2] > 0 && s[3] > 0)
        << "batch_norm: N, C, H, W must be positive in " << w.str();
    return s;
  }
  static double epsilon(const Workload& w) {
    const double e = w.real_or("eps", 1e-5f);
    user_check(e > 0 && std::isfinite(e)) << "batch_norm: eps (epsilon) must be positive, got " << e;
    return e;
  }

  ConfigSpace space(const Workload& w, const Target&) const override {
    shape(w);
    ConfigSpace cs;
    cs.define_knob("vec_unroll", {0, 1, 2, 4});  // vectors per step along H*W; 0: scalar
    cs.define_knob("parallel", {0, 1});
    return cs;
  }
  Config fallback(const Workload& w, const Target& t) const override {
    auto s = shape(w);
    int64_t hw = s[2] * s[3];
    return Config({{"vec_unroll", hw >= 2 * t.lanes(DataType::f32()) ? 2 : 1},
                   {"parallel", s[0] * s[1] > 1 && s[0] * s[1] * hw >= 16384 ? 1 : 0}});
  }
  std::vector<TensorSpec> inputs(const Workload& w) const override {
    auto s = shape(w);
    return {{"X", {s[0], s[1], s[2], s[3]}}, {"gamma", {s[1]}}, {"beta", {s[1]}},
            {"mean", {s[1]}}, {"var", {s[1]}}};
  }
  TensorSpec output(const Workload& w) const override {
    auto s = shape(w);
    return {"Y", {s[0], s[1], s[2], s[3]}};
  }

  Values reference(const Workload& w, const std::vector<Values>& in) const override {
    auto s = shape(w);
    const double eps = epsilon(w);
    const int64_t hw = s[2] * s[3];
    Values y(in[0].size());
    for (int64_t p = 0; p < s[0] * s[1]; ++p) {
      int64_t c = p % s[1];
      double inv = 1.0 / std::sqrt(double(in[4][c]) + eps);
      for (int64_t i = 0; i < hw; ++i) {
        size_t k = static_cast<size_t>(p * hw + i);
        y[k] = static_cast<float>((in[0][k] - double(in[3][c])) * inv * in[1][c] + in[2][c]);
      }
    }
    return y;
  }

 protected:
  ScheduledKernel schedule(const Workload& w, const Target& t,
                           const Config& cfg) const override {
    auto s = shape(w);
    const DataType f32 = DataType::f32();
    const int64_t hw = s[2] * s[3], c = s[1];
    auto f = [&](Expr e) { return ir::make_cast(f32, e); };
    // Planes as rows of H*W: the same memory as [N, C, H, W], one contiguous vector loop.
    te::Tensor x = te::placeholder({s[0], c, hw}, w.dtype, "X");
    te::Tensor gamma = te::placeholder({c}, w.dtype, "gamma");
    te::Tensor beta = te::placeholder({c}, w.dtype, "beta");
    te::Tensor mean = te::placeholder({c}, w.dtype, "mean");
    te::Tensor var = te::placeholder({c}, w.dtype, "var");
    Expr eps = ir::make_float(f32, epsilon(w));
    te::Tensor scale = te::compute(
        {c},
        [&](Var ch) { return f(gamma(ch)) / ir::make_call(f32, "sqrt", {f(var(ch)) + eps}); },
        "scale");
    te::Tensor shift = te::compute(
        {c}, [&](Var ch) { return f(beta(ch)) - f(mean(ch)) * scale(ch); }, "shift");
    te::Tensor y = te::compute(
        {s[0], c, hw},
        [&](Var n, Var ch, Var i) {
          return ir::make_cast(w.dtype, f(x(n, ch, i)) * scale(ch) + shift(ch));
        },
        "Y");

    te::Schedule sch({y});
    // scale and shift: C values at the root, before the planes (shift reads scale, so
    // neither can move inside the plane loop of Y).
    te::Stage out = sch[y];
    ir::IterVar plane = out.fuse(out.axis(0), out.axis(1));
    if (cfg["parallel"]) out.parallel(plane);
    if (int64_t u = cfg["vec_unroll"]; u > 0) {
      const int64_t lanes = t.lanes(f32);
      auto [io, ii] = out.split(out.axis(2), lanes * u);
      auto [iv, il] = out.split(ii, lanes);
      out.unroll(iv);
      out.vectorize(il);
    }

    return logical_kernel(std::move(sch), {x, gamma, beta, mean, var, y}, inputs(w), output(w),
                          2.0 * double(s[0] * c * hw));
  }
};

}  // namespace

const OpTemplate& batch_norm_template() {
  static const BatchNorm t;
  return t;
}

}  // namespace kiln::schedules
