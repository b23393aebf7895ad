#include "schedules/cast.h"

#include <cmath>

#include "compiler/base/error.h"
#include "compiler/te/schedule.h"

namespace kiln::schedules {

using ir::DataType;
using ir::Expr;
using ir::Var;

namespace {

class Cast : public OpTemplate {
 public:
  std::string name() const override { return "cast.flat"; }
  std::string op() const override { return "cast"; }
  bool applies(const Workload& w, const Target&) const override { return w.op == op(); }
  std::vector<DataType> dtypes() const override {
    return {DataType::i64(), DataType::i32(), DataType::u8()};
  }
  ConfigSpace space(const Workload& w, const Target&) const override {
    w.param("E");
    ConfigSpace cs;
    cs.define_knob("vectorize", {1});
    return cs;
  }
  std::vector<std::string> value_params() const override { return {"to_f32"}; }  // 0 or 1
  Config fallback(const Workload&, const Target&) const override {
    return Config({{"vectorize", 1}});
  }
  std::vector<TensorSpec> inputs(const Workload& w) const override { return {{"X", {w.param("E")}}}; }
  TensorSpec output(const Workload& w) const override { return {"Y", {w.param("E")}}; }

  // Values as the f32 side sees them: the integer side's values are whole numbers.
  Values reference(const Workload& w, const std::vector<Values>& in) const override {
    Values out(in[0].size());
    for (size_t i = 0; i < out.size(); ++i) {
      const double x = in[0][i];
      out[i] = static_cast<float>(w.dtype == DataType::u8() ? (x != 0 ? 1.0 : 0.0) : std::trunc(x));
    }
    return out;
  }

 protected:
  ScheduledKernel schedule(const Workload& w, const Target& t, const Config&) const override {
    const int64_t n = w.param("E");
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
          return ir::make_cast(w.dtype, x(i));  // fptosi: toward zero
        },
        "Y");
    te::Schedule sch({y});
    te::Stage st = sch[y];
    auto [o, l] = st.split(st.axis(0), t.lanes(f32));
    st.vectorize(l);
    return logical_kernel(std::move(sch), {x, y}, inputs(w), output(w), double(n));
  }
};

}  // namespace

const OpTemplate& cast_template() {
  static const Cast k;
  return k;
}

}  // namespace kiln::schedules
