#include "schedules/elementwise/qlinear_add.h"

#include <algorithm>
#include <cmath>

#include "compiler/base/error.h"
#include "compiler/ir/op.h"
#include "compiler/te/schedule.h"
#include "schedules/elementwise/cast.h"
#include "schedules/elementwise/flat_int8.h"
#include "schedules/elementwise/quantize.h"
#include "schedules/requantize.h"

namespace kiln::schedules {

using ir::DataType;
using ir::Expr;
using ir::Var;

namespace {

class QLinearAddFlat : public FlatInt8Template {
 public:
  std::string name() const override { return "qlinear_add.flat"; }
  std::string op() const override { return "qlinear_add"; }
  std::vector<std::string> value_params() const override { return {"a_zero", "b_zero", "y_zero"}; }
  std::vector<TensorSpec> inputs(const Workload& w) const override {
    return {{"A", {w.param("elements")}}, {"B", {w.param("elements")}}};
  }

  Values reference(const Workload& w, const std::vector<Values>& in) const override {
    const Int8Range r = int8_range(w);
    const int64_t za = w.param("a_zero"), zb = w.param("b_zero"), zy = w.param("y_zero");
    Values out(in[0].size());
    for (size_t i = 0; i < out.size(); ++i) {
      const int64_t a = static_cast<int64_t>(in[0][i]) - za,
                    b = static_cast<int64_t>(in[1][i]) - zb;
      int64_t q = 0;
      if (fixed_point(w)) {
        const int64_t acc = w.param("a_mult") * a + w.param("b_mult") * b;
        const int64_t half = int64_t{1} << (w.param("shift") - 1);
        q = acc >= 0 ? (acc + half) >> w.param("shift") : -((half - acc) >> w.param("shift"));
      } else {
        const float fa = float(a) * static_cast<float>(w.real("a_scale"));
        const float fb = float(b) * static_cast<float>(w.real("b_scale"));
        const float sum = fa + fb;
        q = static_cast<int64_t>(
            std::nearbyint(double(sum / static_cast<float>(w.real("y_scale")))));
      }
      out[i] = static_cast<float>(std::clamp(q + zy, r.lo, r.hi));
    }
    return out;
  }

 protected:
  void check(const Workload& w, const Target&) const override {
    const Int8Range r = int8_range(w);
    for (const char* s : {"a_scale", "b_scale", "y_scale"})
      user_check(std::isfinite(w.real(s)) && w.real(s) > 0)
          << w.str() << ": " << s << " must be positive and finite, got " << w.real(s);
    for (const char* z : {"a_zero", "b_zero", "y_zero"})
      user_check(w.param(z) >= r.lo && w.param(z) <= r.hi)
          << w.str() << ": " << z << " " << w.param(z) << " is outside " << w.dtype.str()
          << "'s range";
    if (fixed_point(w))
      user_check(w.param("shift") <= 31 && w.param("a_mult") >= 0 && w.param("b_mult") >= 0 &&
                 w.param("a_mult") < (1 << 22) && w.param("b_mult") < (1 << 22))
          << w.str() << ": the fixed-point multipliers must be below 2^22 and the shift at most 31";
  }

  ScheduledKernel schedule(const Workload& w, const Target& t, const Config& cfg) const override {
    const int64_t n = w.param("elements");
    te::Tensor a = te::placeholder({n}, w.dtype, "A");
    te::Tensor b = te::placeholder({n}, w.dtype, "B");
    te::Tensor y = te::compute(
        {n},
        [&](Var i) {
          return fixed_point(w) ? fixed_point_sum(w, a(i), b(i)) : float_sum(w, a(i), b(i));
        },
        "Y");
    te::Schedule sch({y});
    schedule_flat_conversion(sch[y], t, cfg["parallel"] != 0);
    return logical_kernel(std::move(sch), {a, b, y}, inputs(w), output(w), double(n));
  }

 private:
  static bool fixed_point(const Workload& w) { return w.param_or("shift", 0) > 0; }

  // The two DequantizeLinears, the Add and the QuantizeLinear, each rounded to f32 as ONNX
  // Runtime rounds them: strict, so no product and sum become one FMA.
  static Expr float_sum(const Workload& w, Expr a, Expr b) {
    const DataType f32 = DataType::f32();
    auto real = [&](const char* p) {
      return ir::make_const(f32, double(static_cast<float>(w.real(p))));
    };
    auto integer = [&](const char* p) { return ir::make_const(f32, double(w.param(p))); };
    Expr fa = (ir::make_cast(f32, a) - integer("a_zero")) * real("a_scale");
    Expr fb = (ir::make_cast(f32, b) - integer("b_zero")) * real("b_scale");
    Expr sum = ir::make_call(f32, "strict_fp", {fa + fb});
    return quantize_linear_expr(sum, w.real("y_scale"), w.param("y_zero"), w.dtype);
  }

  // ONNX Runtime's fixed point: int32 products and sum, rounded half away from zero.
  static Expr fixed_point_sum(const Workload& w, Expr a, Expr b) {
    const DataType i32 = DataType::i32();
    auto integer = [&](const char* p) { return ir::make_const(i32, double(w.param(p))); };
    Expr acc = (ir::make_cast(i32, a) - integer("a_zero")) * integer("a_mult") +
               (ir::make_cast(i32, b) - integer("b_zero")) * integer("b_mult");
    const int64_t shift = w.param("shift");
    const Expr half = ir::make_const(i32, double(int64_t{1} << (shift - 1)));
    const Expr unit = ir::make_const(i32, double(int64_t{1} << shift));
    Expr q = ir::make_select(acc >= ir::make_const(i32, 0.0), ir::floordiv(acc + half, unit),
                             ir::make_const(i32, 0.0) - ir::floordiv(half - acc, unit));
    const Int8Range r = int8_range(w);
    q = ir::max(ir::min(q + integer("y_zero"), ir::make_const(i32, double(r.hi))),
                ir::make_const(i32, double(r.lo)));
    return ir::make_cast(w.dtype, q);
  }
};

}  // namespace

const OpTemplate& qlinear_add_template() {
  static const QLinearAddFlat t;
  return t;
}

Workload qlinear_add_workload(int64_t elements, DataType type, const QLinearAddParams& p) {
  Workload w{
      "qlinear_add",
      {{"elements", elements}, {"a_zero", p.a_zero}, {"b_zero", p.b_zero}, {"y_zero", p.y_zero}},
      type,
      {}};
  w.params["a_scale"] = p.a_scale;
  w.params["b_scale"] = p.b_scale;
  w.params["y_scale"] = p.y_scale;
  if (p.shift > 0) {
    w.params["shift"] = p.shift;
    w.params["a_mult"] = p.a_mult;
    w.params["b_mult"] = p.b_mult;
  }
  return w;
}

}  // namespace kiln::schedules
