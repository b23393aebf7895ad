#include "schedules/cast.h"

#include <algorithm>

#include "compiler/base/error.h"
#include "compiler/te/schedule.h"

namespace kiln::schedules {

using ir::DataType;
using ir::Var;

namespace {

class Cast : public OpTemplate {
 public:
  std::string name() const override { return "cast.flat"; }
  std::string op() const override { return "cast"; }
  bool applies(const Workload& w, const Target&) const override {
    return w.op == op() && (w.dtype == DataType::f16() || w.dtype == DataType::bf16());
  }
  ConfigSpace space(const Workload& w, const Target&) const override {
    user_check(w.param("to_f32") == 0 || w.param("to_f32") == 1)
        << "cast: to_f32 must be 0 (f32 to " << w.dtype.str() << ") or 1 (" << w.dtype.str()
        << " to f32), got " << w.param("to_f32");
    ConfigSpace cs;
    cs.define_knob("parallel", {0, 1});
    return cs;
  }
  Config fallback(const Workload& w, const Target&) const override {
    // Threads pay for themselves past about 64 KiB of f32 (as the copy kernels find).
    return Config({{"parallel", w.param("elements") * 4 >= (64 << 10) ? 1 : 0}});
  }
  std::vector<TensorSpec> inputs(const Workload& w) const override {
    return {{"X", {w.param("elements")}}};
  }
  TensorSpec output(const Workload& w) const override { return {"Y", {w.param("elements")}}; }
  // The identity: the harness rounds the inputs to their type and the reference to the
  // output's, which is exactly the conversion.
  Values reference(const Workload&, const std::vector<Values>& in) const override { return in[0]; }
  std::vector<DataType> dtypes() const override { return {DataType::f16(), DataType::bf16()}; }

 protected:
  ScheduledKernel schedule(const Workload& w, const Target& t, const Config& cfg) const override {
    const int64_t n = w.param("elements");
    const bool to_f32 = w.param("to_f32") != 0;
    const DataType from = to_f32 ? w.dtype : DataType::f32(), to = to_f32 ? DataType::f32() : w.dtype;
    te::Tensor x = te::placeholder({n}, from, "X");
    te::Tensor y = te::compute({n}, [&](Var i) { return ir::make_cast(to, x(i)); }, "Y");
    te::Schedule sch({y});
    te::Stage out = sch[y];
    // Vectors as wide as the target holds f32 lanes (the conversion works on f32 registers),
    // four at a time.
    const int64_t lanes = t.lanes(DataType::f32()), step = lanes * 4;
    ir::IterVar inner = out.axis(0);
    if (cfg["parallel"]) {
      auto [o, i] = out.split(inner, step * 64);
      out.parallel(o);
      inner = i;
    }
    auto [o, i] = out.split(inner, step);
    auto [v, l] = out.split(i, lanes);
    out.unroll(v);
    out.vectorize(l);
    return logical_kernel(std::move(sch), {x, y}, inputs(w), output(w), double(n));
  }
};

}  // namespace

const OpTemplate& cast_template() {
  static const Cast t;
  return t;
}

Workload cast_workload(int64_t elements, DataType half, bool to_f32) {
  return Workload{"cast", {{"elements", elements}, {"to_f32", to_f32 ? 1 : 0}}, half, {}};
}

}  // namespace kiln::schedules
