#include "schedules/reduce/arg_reduce.h"

#include <cfloat>

#include "compiler/base/error.h"
#include "compiler/te/schedule.h"
#include "schedules/reduce/reduce.h"

namespace kiln::schedules {

using ir::DataType;
using ir::Expr;
using ir::Var;

const std::vector<std::string>& arg_reduce_ops() {
  static const std::vector<std::string> k = {"arg_max", "arg_min"};
  return k;
}

namespace {

bool select_last(const Workload& w) {
  const int64_t v = w.param_or("select_last", 0);
  user_check(v == 0 || v == 1) << w.op << ": select_last must be 0 or 1, got " << v;
  return v == 1;
}

class ArgReduce : public OpTemplate {
 public:
  explicit ArgReduce(std::string op) : op_(std::move(op)) {}
  std::string name() const override { return "arg.rows." + op_; }
  std::string op() const override { return op_; }
  bool applies(const Workload& w, const Target&) const override { return w.op == op_; }

  ConfigSpace space(const Workload& w, const Target&) const override {
    reduce_shape(w);
    select_last(w);
    ConfigSpace cs;
    cs.define_knob("parallel", {0, 1});
    return cs;
  }
  Config fallback(const Workload& w, const Target&) const override {
    ReduceShape s = reduce_shape(w);
    return Config({{"parallel", s.outer > 1 && s.outer * s.reduced * s.inner > (1 << 16) ? 1 : 0}});
  }

  std::vector<TensorSpec> inputs(const Workload& w) const override {
    ReduceShape s = reduce_shape(w);
    return {{"X", {s.outer, s.reduced, s.inner}}};
  }
  TensorSpec output(const Workload& w) const override {
    ReduceShape s = reduce_shape(w);
    return {"Y", {s.outer, s.inner}};
  }

  Values reference(const Workload& w, const std::vector<Values>& in) const override {
    ReduceShape s = reduce_shape(w);
    const bool last = select_last(w), is_max = op_ == "arg_max";
    Values y(static_cast<size_t>(s.outer * s.inner));
    for (int64_t o = 0; o < s.outer; ++o)
      for (int64_t i = 0; i < s.inner; ++i) {
        int64_t best = 0;
        for (int64_t r = 1; r < s.reduced; ++r) {
          const float v = in[0][static_cast<size_t>((o * s.reduced + r) * s.inner + i)];
          const float b = in[0][static_cast<size_t>((o * s.reduced + best) * s.inner + i)];
          if (is_max ? (v > b || (last && v == b)) : (v < b || (last && v == b))) best = r;
        }
        y[static_cast<size_t>(o * s.inner + i)] = static_cast<float>(best);
      }
    return y;
  }

 protected:
  ScheduledKernel schedule(const Workload& w, const Target&, const Config& cfg) const override {
    ReduceShape s = reduce_shape(w);
    const DataType f32 = DataType::f32();
    const bool last = select_last(w), is_max = op_ == "arg_max";
    te::Tensor x = te::placeholder({s.outer, s.reduced, s.inner}, w.dtype, "X");
    auto at = [&](Var o, Expr r, Var i) { return ir::make_cast(f32, x(o, r, i)); };
    // The extreme value, then the largest key among the indices that hold it: the index
    // itself for the last tie, reduced - 1 - index for the first (undone below).
    ir::IterVar r1 = te::reduce_axis(s.reduced, "r");
    te::Tensor extreme = te::compute(
        {s.outer, s.inner},
        [&](Var o, Var i) {
          return is_max ? te::max_reduce(at(o, r1->var, i), {r1})
                        : te::min_reduce(at(o, r1->var, i), {r1});
        },
        "Y.extreme");
    ir::IterVar r2 = te::reduce_axis(s.reduced, "k");
    const Expr top = ir::make_float(f32, double(s.reduced - 1));
    te::Tensor key = te::compute(
        {s.outer, s.inner},
        [&](Var o, Var i) {
          Expr k = ir::make_cast(f32, r2->var);
          Expr holds = at(o, r2->var, i) == extreme(o, i);
          return te::max_reduce(ir::make_select(holds, last ? k : top - k, ir::make_float(f32, -1)),
                                {r2});
        },
        "Y.key");
    te::Tensor y = te::compute(
        {s.outer, s.inner},
        [&](Var o, Var i) { return ir::make_cast(w.dtype, last ? key(o, i) : top - key(o, i)); },
        "Y");
    te::Schedule sch({y});
    te::Stage out = sch[y];
    if (cfg["parallel"] && s.outer > 1) out.parallel(out.axis(0));
    for (te::Tensor t : {key, extreme}) {
      sch[t].set_scope(ir::MemScope::Local);
      sch[t].compute_at(out, out.axis(1));
    }
    return logical_kernel(std::move(sch), {x, y}, inputs(w), output(w),
                          2.0 * double(s.outer * s.reduced * s.inner));
  }

 private:
  std::string op_;
};

}  // namespace

const OpTemplate& arg_reduce_template(const std::string& op) {
  return family_template<ArgReduce>(arg_reduce_ops(), op, "arg reduce");
}

}  // namespace kiln::schedules
