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
      if (scaled(w)) {
        const float v = std::fma(float(a + za), static_cast<float>(w.real("a_ratio")),
                                 std::fma(float(b + zb), static_cast<float>(w.real("b_ratio")),
                                          static_cast<float>(w.real("offset"))));
        q = static_cast<int64_t>(std::nearbyint(v)) - zy;
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
    if (scaled(w))
      for (const char* p : {"a_ratio", "b_ratio", "offset"})
        user_check(std::isfinite(w.real(p))) << w.str() << ": " << p << " must be finite";
  }

  ScheduledKernel schedule(const Workload& w, const Target& t, const Config& cfg) const override {
    const int64_t n = w.param("elements");
    te::Tensor a = te::placeholder({n}, w.dtype, "A");
    te::Tensor b = te::placeholder({n}, w.dtype, "B");
    te::Tensor y = te::compute(
        {n}, [&](Var i) { return scaled(w) ? scaled_sum(w, a(i), b(i)) : qdq_sum(w, a(i), b(i)); },
        "Y");
    te::Schedule sch({y});
    schedule_flat_conversion(sch[y], t, cfg["parallel"] != 0);
    return logical_kernel(std::move(sch), {a, b, y}, inputs(w), output(w), double(n));
  }

 private:
  static bool scaled(const Workload& w) { return w.params.count("a_ratio") > 0; }

  // The two DequantizeLinears, the Add and the QuantizeLinear, each rounded to f32 as ONNX
  // Runtime rounds them: strict, so no product and sum become one FMA.
  static Expr qdq_sum(const Workload& w, Expr a, Expr b) {
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

  // ONNX Runtime's: each operand times its ratio to the output scale, in two fused steps.
  static Expr scaled_sum(const Workload& w, Expr a, Expr b) {
    const DataType f32 = DataType::f32();
    auto real = [&](const char* p) {
      return ir::make_const(f32, double(static_cast<float>(w.real(p))));
    };
    Expr v = ir::make_call(f32, "fma", {ir::make_cast(f32, b), real("b_ratio"), real("offset")});
    v = ir::make_call(f32, "fma", {ir::make_cast(f32, a), real("a_ratio"), v});
    const Int8Range r = int8_range(w);
    v = ir::max(ir::min(ir::make_call(f32, "round", {v}), ir::make_const(f32, double(r.hi))),
                ir::make_const(f32, double(r.lo)));
    return ir::make_cast(w.dtype, v);
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
  if (p.ratios) {
    w.params["a_ratio"] = p.a_ratio;
    w.params["b_ratio"] = p.b_ratio;
    w.params["offset"] = p.offset;
  }
  return w;
}

}  // namespace kiln::schedules
