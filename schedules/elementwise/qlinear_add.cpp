#include "schedules/elementwise/qlinear_add.h"

#include <algorithm>
#include <cmath>

#include "compiler/base/error.h"
#include "compiler/ir/op.h"
#include "compiler/te/schedule.h"
#include "schedules/elementwise/cast.h"
#include "schedules/elementwise/flat_int8.h"
#include "schedules/requantize.h"

namespace kiln::schedules {

using ir::DataType;
using ir::Expr;
using ir::Var;

namespace {

float f32_param(const Workload& w, const char* name) {
  return static_cast<float>(w.real(name));
}

class QLinearAddFlat : public FlatInt8Template {
 public:
  std::string name() const override { return "qlinear_add.flat"; }
  std::string op() const override { return "qlinear_add"; }
  std::vector<TensorSpec> inputs(const Workload& w) const override {
    return {{"A", {w.param("elements")}}, {"B", {w.param("elements")}}};
  }

  Values reference(const Workload& w, const std::vector<Values>& in) const override {
    const Int8Range r = int8_range(w);
    const float ra = f32_param(w, "a_ratio"), rb = f32_param(w, "b_ratio");
    const float offset = f32_param(w, "offset");
    Values out(in[0].size());
    for (size_t i = 0; i < out.size(); ++i) {
      const float v = std::fma(in[0][i], ra, std::fma(in[1][i], rb, offset));
      out[i] = std::clamp(std::nearbyint(v), float(r.lo), float(r.hi));
    }
    return out;
  }

 protected:
  void check(const Workload& w, const Target&) const override {
    int8_range(w);
    for (const char* p : {"a_ratio", "b_ratio", "offset"})
      user_check(std::isfinite(w.real(p))) << w.str() << ": " << p << " must be finite";
  }

  ScheduledKernel schedule(const Workload& w, const Target& t, const Config& cfg) const override {
    const int64_t n = w.param("elements");
    const DataType f32 = DataType::f32();
    const Int8Range r = int8_range(w);
    auto real = [&](const char* p) { return ir::make_const(f32, double(f32_param(w, p))); };
    te::Tensor a = te::placeholder({n}, w.dtype, "A");
    te::Tensor b = te::placeholder({n}, w.dtype, "B");
    te::Tensor y = te::compute(
        {n},
        [&](Var i) -> Expr {
          // fma, not a product and a sum: ONNX Runtime's kernel rounds once per step.
          Expr v = ir::make_call(f32, "fma",
                                 {ir::make_cast(f32, b(i)), real("b_ratio"), real("offset")});
          v = ir::make_call(f32, "fma", {ir::make_cast(f32, a(i)), real("a_ratio"), v});
          v = ir::make_call(f32, "round", {v});
          v = ir::max(ir::min(v, ir::make_const(f32, double(r.hi))),
                      ir::make_const(f32, double(r.lo)));
          return ir::make_cast(w.dtype, v);
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
  Workload w{"qlinear_add", {{"elements", elements}}, type, {}};
  w.params["a_ratio"] = p.a_ratio;
  w.params["b_ratio"] = p.b_ratio;
  w.params["offset"] = p.offset;
  return w;
}

}  // namespace kiln::schedules
