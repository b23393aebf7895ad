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
    const float sa = static_cast<float>(w.real("a_scale")),
                sb = static_cast<float>(w.real("b_scale"));
    const float sy = static_cast<float>(w.real("y_scale"));
    const float za = float(w.param("a_zero")), zb = float(w.param("b_zero"));
    const Int8Range r = int8_range(w);
    Values out(in[0].size());
    for (size_t i = 0; i < out.size(); ++i) {
      const float fa = (in[0][i] - za) * sa, fb = (in[1][i] - zb) * sb;
      const float sum = fa + fb;
      const double q = std::nearbyint(double(sum / sy)) + double(w.param("y_zero"));
      out[i] = static_cast<float>(std::clamp(q, double(r.lo), double(r.hi)));
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
  }

  ScheduledKernel schedule(const Workload& w, const Target& t, const Config& cfg) const override {
    const int64_t n = w.param("elements");
    const DataType f32 = DataType::f32();
    auto real = [&](const char* p) {
      return ir::make_const(f32, double(static_cast<float>(w.real(p))));
    };
    auto integer = [&](const char* p) { return ir::make_const(f32, double(w.param(p))); };
    te::Tensor a = te::placeholder({n}, w.dtype, "A");
    te::Tensor b = te::placeholder({n}, w.dtype, "B");
    te::Tensor y = te::compute(
        {n},
        [&](Var i) -> Expr {
          // The two DequantizeLinears, the Add and the QuantizeLinear, each rounded to f32 as
          // ONNX Runtime rounds them: strict, so no product and sum become one FMA.
          Expr fa = (ir::make_cast(f32, a(i)) - integer("a_zero")) * real("a_scale");
          Expr fb = (ir::make_cast(f32, b(i)) - integer("b_zero")) * real("b_scale");
          Expr sum = ir::make_call(f32, "strict_fp", {fa + fb});
          return quantize_linear_expr(sum, w.real("y_scale"), w.param("y_zero"), w.dtype);
        },
        "Y");
    te::Schedule sch({y});
    schedule_flat_conversion(sch[y], t, cfg["parallel"] != 0);
    return logical_kernel(std::move(sch), {a, b, y}, inputs(w), output(w), double(n));
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
  return w;
}

}  // namespace kiln::schedules
