#include "schedules/elementwise/quantize.h"

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

// Both directions: the checks, the flat loop and its knob.
class QuantizeFlat : public FlatInt8Template {
 public:
  explicit QuantizeFlat(bool quantize) : quantize_(quantize) {}
  std::string name() const override { return quantize_ ? "quantize.flat" : "dequantize.flat"; }
  std::string op() const override { return quantize_ ? "quantize" : "dequantize"; }
  std::vector<std::string> value_params() const override { return {"zero"}; }
  std::vector<TensorSpec> inputs(const Workload& w) const override {
    return {{"X", {w.param("elements")}}};
  }

  Values reference(const Workload& w, const std::vector<Values>& in) const override {
    const float scale = static_cast<float>(w.real("scale"));
    const int64_t zero = w.param("zero");
    const Int8Range r = int8_range(w);
    Values out(in[0].size());
    for (size_t i = 0; i < out.size(); ++i) {
      if (quantize_) {
        const double q = std::nearbyint(double(in[0][i] / scale)) + double(zero);
        out[i] = static_cast<float>(std::clamp(q, double(r.lo), double(r.hi)));
      } else {
        out[i] = (in[0][i] - static_cast<float>(zero)) * scale;
      }
    }
    return out;
  }

 protected:
  void check(const Workload& w, const Target&) const override {
    const double scale = w.real("scale");
    user_check(std::isfinite(scale) && scale > 0)
        << w.str() << ": the scale must be positive and finite, got " << scale;
    const Int8Range r = int8_range(w);
    user_check(w.param("zero") >= r.lo && w.param("zero") <= r.hi)
        << w.str() << ": zero point " << w.param("zero") << " is outside " << w.dtype.str()
        << "'s range";
  }

  ScheduledKernel schedule(const Workload& w, const Target& t, const Config& cfg) const override {
    const int64_t n = w.param("elements");
    const DataType f32 = DataType::f32();
    const Expr scale = ir::make_const(f32, double(static_cast<float>(w.real("scale"))));
    const Expr zero = ir::make_const(f32, double(w.param("zero")));
    te::Tensor x = te::placeholder({n}, quantize_ ? f32 : w.dtype, "X");
    te::Tensor y = te::compute(
        {n},
        [&](Var i) -> Expr {
          if (!quantize_) return (ir::make_cast(f32, x(i)) - zero) * scale;
          return quantize_linear_expr(x(i), w.real("scale"), w.param("zero"), w.dtype);
        },
        "Y");
    te::Schedule sch({y});
    schedule_flat_conversion(sch[y], t, cfg["parallel"] != 0);
    return logical_kernel(std::move(sch), {x, y}, inputs(w), output(w), double(n));
  }

 private:
  bool quantize_;
};

}  // namespace

const OpTemplate& quantize_template() {
  static const QuantizeFlat t(true);
  return t;
}

const OpTemplate& dequantize_template() {
  static const QuantizeFlat t(false);
  return t;
}

Expr quantize_linear_expr(Expr x, double scale, int64_t zero, DataType type) {
  const DataType f32 = DataType::f32();
  const Int8Range r = type == DataType::u8() ? Int8Range{0, 255} : Int8Range{-128, 127};
  Expr q =
      ir::make_call(f32, "round", {x / ir::make_const(f32, double(static_cast<float>(scale)))}) +
      ir::make_const(f32, double(zero));
  q = ir::max(ir::min(q, ir::make_const(f32, double(r.hi))), ir::make_const(f32, double(r.lo)));
  return ir::make_cast(type, q);
}

Workload quantize_workload(const std::string& op, int64_t elements, DataType quantized,
                           double scale, int64_t zero) {
  Workload w{op, {{"elements", elements}, {"zero", zero}}, quantized, {}};
  w.params["scale"] = scale;
  return w;
}

}  // namespace kiln::schedules
