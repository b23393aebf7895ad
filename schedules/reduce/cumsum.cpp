#include "schedules/reduce/cumsum.h"

#include "compiler/base/error.h"
#include "compiler/te/schedule.h"
#include "schedules/reduce/reduce.h"

namespace kiln::schedules {

using ir::DataType;
using ir::Expr;
using ir::Var;

namespace {

struct CumsumForm {
  ReduceShape s;
  bool exclusive, reverse;
};

CumsumForm form_of(const Workload& w) {
  CumsumForm f{reduce_shape(w), w.param_or("exclusive", 0) != 0, w.param_or("reverse", 0) != 0};
  for (const char* key : {"exclusive", "reverse"}) {
    const int64_t v = w.param_or(key, 0);
    user_check(v == 0 || v == 1) << "cumsum: " << key << " must be 0 or 1, got " << v;
  }
  return f;
}

// Whether X[k] counts towards Y[r].
bool counts(const CumsumForm& f, int64_t k, int64_t r) {
  if (f.reverse) return f.exclusive ? k > r : k >= r;
  return f.exclusive ? k < r : k <= r;
}

class Cumsum : public OpTemplate {
 public:
  std::string name() const override { return "cumsum.rows"; }
  std::string op() const override { return "cumsum"; }
  bool applies(const Workload& w, const Target&) const override { return w.op == op(); }

  ConfigSpace space(const Workload& w, const Target&) const override {
    form_of(w);
    ConfigSpace cs;
    cs.define_knob("parallel", {0, 1});
    return cs;
  }
  Config fallback(const Workload& w, const Target&) const override {
    ReduceShape s = form_of(w).s;
    return Config({{"parallel",
                    s.outer > 1 && s.outer * s.reduced * s.reduced * s.inner > (1 << 16) ? 1 : 0}});
  }

  std::vector<TensorSpec> inputs(const Workload& w) const override {
    ReduceShape s = form_of(w).s;
    return {{"X", {s.outer, s.reduced, s.inner}}};
  }
  TensorSpec output(const Workload& w) const override {
    ReduceShape s = form_of(w).s;
    return {"Y", {s.outer, s.reduced, s.inner}};
  }

  Values reference(const Workload& w, const std::vector<Values>& in) const override {
    CumsumForm f = form_of(w);
    const ReduceShape& s = f.s;
    Values y(static_cast<size_t>(s.outer * s.reduced * s.inner));
    for (int64_t o = 0; o < s.outer; ++o)
      for (int64_t r = 0; r < s.reduced; ++r)
        for (int64_t i = 0; i < s.inner; ++i) {
          double acc = 0;
          for (int64_t k = 0; k < s.reduced; ++k)
            if (counts(f, k, r))
              acc += in[0][static_cast<size_t>((o * s.reduced + k) * s.inner + i)];
          y[static_cast<size_t>((o * s.reduced + r) * s.inner + i)] = static_cast<float>(acc);
        }
    return y;
  }

 protected:
  ScheduledKernel schedule(const Workload& w, const Target&, const Config& cfg) const override {
    CumsumForm f = form_of(w);
    const ReduceShape& s = f.s;
    const DataType f32 = DataType::f32();
    te::Tensor x = te::placeholder({s.outer, s.reduced, s.inner}, w.dtype, "X");
    ir::IterVar k = te::reduce_axis(s.reduced, "k");
    te::Tensor total = te::compute(
        {s.outer, s.reduced, s.inner},
        [&](Var o, Var r, Var i) {
          Expr kv = k->var;
          Expr in = f.reverse ? (f.exclusive ? kv > r : kv >= r) : (f.exclusive ? kv < r : kv <= r);
          return te::sum(
              ir::make_select(in, ir::make_cast(f32, x(o, kv, i)), ir::make_float(f32, 0)), {k});
        },
        "Y.sum");
    te::Tensor y = te::compute(
        {s.outer, s.reduced, s.inner},
        [&](Var o, Var r, Var i) { return ir::make_cast(w.dtype, total(o, r, i)); }, "Y");
    te::Schedule sch({y});
    te::Stage out = sch[y];
    if (cfg["parallel"] && s.outer > 1) out.parallel(out.axis(0));
    sch[total].set_scope(ir::MemScope::Local);
    sch[total].compute_at(out, out.axis(2));
    return logical_kernel(std::move(sch), {x, y}, inputs(w), output(w),
                          double(s.outer * s.reduced * s.reduced * s.inner));
  }
};

}  // namespace

const OpTemplate& cumsum_template() {
  static const Cumsum k;
  return k;
}

}  // namespace kiln::schedules
