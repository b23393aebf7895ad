#include "schedules/elementwise/cast.h"

#include <cmath>

#include "compiler/base/error.h"
#include "compiler/te/schedule.h"

namespace kiln::schedules {

using ir::DataType;
using ir::Expr;
using ir::Var;

namespace {

bool is_half(DataType t) { return t == DataType::f16() || t == DataType::bf16(); }
bool is_integer_or_bool(DataType t) {
  return t == DataType::i64() || t == DataType::i32() || t == DataType::u8();
}

class Cast : public OpTemplate {
 public:
  std::string name() const override { return "cast.flat"; }
  std::string op() const override { return "cast"; }
  bool applies(const Workload& w, const Target&) const override {
    return w.op == op() && (is_half(w.dtype) || is_integer_or_bool(w.dtype));
  }
  ConfigSpace space(const Workload& w, const Target&) const override {
    user_check(w.param("to_f32") == 0 || w.param("to_f32") == 1)
        << "cast: to_f32 must be 0 (f32 to " << w.dtype.str() << ") or 1 (" << w.dtype.str()
        << " to f32), got " << w.param("to_f32");
    return flat_conversion_space();
  }
  std::vector<std::string> value_params() const override { return {"to_f32"}; }
  Config fallback(const Workload& w, const Target&) const override {
    return flat_conversion_fallback(w);
  }
  std::vector<TensorSpec> inputs(const Workload& w) const override {
    return {{"X", {w.param("elements")}}};
  }
  TensorSpec output(const Workload& w) const override { return {"Y", {w.param("elements")}}; }
  // Half types: the identity (the harness rounds the inputs to their type and the reference
  // to the output's, which is exactly the conversion). Integer types: the values as the f32
  // side sees them, whole numbers (or 1/0 for bool).
  Values reference(const Workload& w, const std::vector<Values>& in) const override {
    if (is_half(w.dtype)) return in[0];
    Values out(in[0].size());
    for (size_t i = 0; i < out.size(); ++i) {
      const double x = in[0][i];
      out[i] = static_cast<float>(w.dtype == DataType::u8() ? (x != 0 ? 1.0 : 0.0) : std::trunc(x));
    }
    return out;
  }
  std::vector<DataType> dtypes() const override {
    return {DataType::f16(), DataType::bf16(), DataType::i64(), DataType::i32(), DataType::u8()};
  }
  // The integer forms have an integer argument beside an f32 one, which the sweeps' harness
  // does not generate; the network tests cover them.
  std::vector<DataType> swept_dtypes() const override { return {DataType::f16(), DataType::bf16()}; }

 protected:
  ScheduledKernel schedule(const Workload& w, const Target& t, const Config& cfg) const override {
    const int64_t n = w.param("elements");
    const bool to_f32 = w.param("to_f32") != 0;
    const DataType f32 = DataType::f32();
    te::Tensor x = te::placeholder({n}, to_f32 ? w.dtype : f32, "X");
    te::Tensor y = te::compute(
        {n},
        [&](Var i) -> Expr {
          if (to_f32) return ir::make_cast(f32, x(i));
          if (w.dtype == DataType::u8())
            return ir::make_cast(w.dtype, ir::make_select(x(i) != ir::make_float(f32, 0),
                                                          ir::make_float(f32, 1),
                                                          ir::make_float(f32, 0)));
          return ir::make_cast(w.dtype, x(i));  // halves round to nearest even; ints toward 0
        },
        "Y");
    te::Schedule sch({y});
    schedule_flat_conversion(sch[y], t, cfg["parallel"] != 0);
    return logical_kernel(std::move(sch), {x, y}, inputs(w), output(w), double(n));
  }
};

}  // namespace

const OpTemplate& cast_template() {
  static const Cast t;
  return t;
}

ConfigSpace flat_conversion_space() {
  ConfigSpace cs;
  cs.define_knob("parallel", {0, 1});
  return cs;
}

Config flat_conversion_fallback(const Workload& w) {
  return Config({{"parallel", w.param("elements") * 4 >= (64 << 10) ? 1 : 0}});
}

void schedule_flat_conversion(te::Stage out, const Target& t, bool parallel) {
  // Vectors as wide as the target holds f32 lanes (the conversion works on f32 registers),
  // four at a time.
  const int64_t lanes = t.lanes(DataType::f32()), step = lanes * 4;
  ir::IterVar inner = out.axis(0);
  if (parallel) {
    auto [o, i] = out.split(inner, step * 64);
    out.parallel(o);
    inner = i;
  }
  auto [o, i] = out.split(inner, step);
  auto [v, l] = out.split(i, lanes);
  out.unroll(v);
  out.vectorize(l);
}

Workload cast_workload(int64_t elements, DataType other, bool to_f32) {
  return Workload{"cast", {{"elements", elements}, {"to_f32", to_f32 ? 1 : 0}}, other, {}};
}

}  // namespace kiln::schedules
