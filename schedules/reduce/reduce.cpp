#include "schedules/reduce/reduce.h"

#include <cfloat>

#include "compiler/base/error.h"
#include "compiler/te/schedule.h"

namespace kiln::schedules {

using ir::DataType;
using ir::Expr;
using ir::Var;

const std::vector<std::string>& reduce_ops() {
  static const std::vector<std::string> k = {"reduce_sum", "reduce_mean", "reduce_max",
                                             "reduce_min"};
  return k;
}

ReduceShape reduce_shape(const Workload& w) {
  ReduceShape s{w.param("outer"), w.param("reduced"), w.param("inner")};
  user_check(s.outer > 0 && s.reduced > 0 && s.inner > 0)
      << w.op << ": outer, reduced and inner must be positive in " << w.str();
  return s;
}

namespace {

// Buffers of partial results up to this many floats live on the stack; larger rows go to
// the kernel's workspace.
const int64_t kLocalFloats = 4096;

class Reduce : public OpTemplate {
 public:
  explicit Reduce(std::string op) : op_(std::move(op)) {}
  std::string name() const override { return "reduce.rows." + op_; }
  std::string op() const override { return op_; }
  bool applies(const Workload& w, const Target&) const override { return w.op == op_; }

  ConfigSpace space(const Workload& w, const Target& t) const override {
    ReduceShape s = reduce_shape(w);
    const int64_t lanes = t.lanes(DataType::f32());
    ConfigSpace cs;
    // Interleaved partial results of a row (inner == 1 only: otherwise the inner elements
    // are the vector).
    cs.define_knob("partials", s.inner == 1 ? std::vector<int64_t>{1, lanes, 2 * lanes}
                                            : std::vector<int64_t>{1});
    cs.define_knob("parallel", {0, 1});
    return cs;
  }

  Config fallback(const Workload& w, const Target& t) const override {
    ReduceShape s = reduce_shape(w);
    const int64_t lanes = t.lanes(DataType::f32());
    return Config({{"partials", s.inner == 1 && s.reduced >= lanes ? lanes : 1},
                   {"parallel", s.outer > 1 && s.outer * s.reduced * s.inner > (1 << 16) ? 1 : 0}});
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
    Values y(static_cast<size_t>(s.outer * s.inner));
    for (int64_t o = 0; o < s.outer; ++o)
      for (int64_t i = 0; i < s.inner; ++i) {
        double acc = op_ == "reduce_max" ? -DBL_MAX : op_ == "reduce_min" ? DBL_MAX : 0.0;
        for (int64_t r = 0; r < s.reduced; ++r) {
          double v = in[0][static_cast<size_t>((o * s.reduced + r) * s.inner + i)];
          acc = op_ == "reduce_max"   ? std::max(acc, v)
                : op_ == "reduce_min" ? std::min(acc, v)
                                      : acc + v;
        }
        if (op_ == "reduce_mean") acc /= double(s.reduced);
        y[static_cast<size_t>(o * s.inner + i)] = static_cast<float>(acc);
      }
    return y;
  }

 protected:
  ScheduledKernel schedule(const Workload& w, const Target& t, const Config& cfg) const override {
    ReduceShape s = reduce_shape(w);
    const DataType f32 = DataType::f32();
    const bool is_max = op_ == "reduce_max", is_min = op_ == "reduce_min";
    const int64_t p = cfg["partials"], chunks = (s.reduced + p - 1) / p;
    const Expr identity = ir::make_float(f32, is_max ? -FLT_MAX : is_min ? FLT_MAX : 0.0);
    auto combine = [&](Expr v, std::vector<ir::IterVar> axes) {
      return is_max   ? te::max_reduce(v, std::move(axes))
             : is_min ? te::min_reduce(v, std::move(axes))
                      : te::sum(v, std::move(axes));
    };
    te::Tensor x = te::placeholder({s.outer, s.reduced, s.inner}, w.dtype, "X");
    // part[o, l, i]: lane l's result over the reduced elements l, l + p, l + 2p, ...
    ir::IterVar rj = te::reduce_axis(chunks, "rj");
    te::Tensor part = te::compute(
        {s.outer, p, s.inner},
        [&](Var o, Var l, Var i) {
          Expr r = rj->var * p + l;
          Expr v = ir::make_cast(f32, x(o, ir::min(r, Expr(s.reduced - 1)), i));
          if (s.reduced % p != 0) v = ir::make_select(r < s.reduced, v, identity);
          return combine(v, {rj});
        },
        "Y.part");
    ir::IterVar rl = te::reduce_axis(p, "rl");
    te::Tensor total = te::compute(
        {s.outer, s.inner}, [&](Var o, Var i) { return combine(part(o, rl, i), {rl}); }, "Y.total");
    const double scale = op_ == "reduce_mean" ? 1.0 / double(s.reduced) : 1.0;
    te::Tensor y = te::compute(
        {s.outer, s.inner},
        [&](Var o, Var i) {
          Expr v = total(o, i);
          if (scale != 1.0) v = v * ir::make_float(f32, scale);
          return ir::make_cast(w.dtype, v);
        },
        "Y");

    te::Schedule sch({y});
    te::Stage out = sch[y];
    if (cfg["parallel"] && s.outer > 1) out.parallel(out.axis(0));
    te::Stage tot = sch[total];
    te::Stage pt = sch[part];
    if (p * s.inner <= kLocalFloats) {
      tot.set_scope(ir::MemScope::Local);
      pt.set_scope(ir::MemScope::Local);
    }
    tot.compute_at(out, out.axis(0));
    pt.compute_at(tot, tot.axis(0));
    // The reduction outside, the vector of partials (lanes or inner elements) inside.
    pt.reorder({pt.axis(0), pt.reduce_axis(0), pt.axis(1), pt.axis(2)});
    const int64_t lanes = t.lanes(f32);
    if (s.inner == 1 && p > 1) {
      auto [lo, li] = pt.split(pt.axis(1), lanes);
      pt.unroll(lo);
      pt.vectorize(li);
    } else if (s.inner >= lanes) {
      auto [io, ii] = pt.split(pt.axis(2), lanes);
      pt.vectorize(ii);
    }
    return logical_kernel(std::move(sch), {x, y}, inputs(w), output(w),
                          double(s.outer * s.reduced * s.inner));
  }

 private:
  std::string op_;
};

}  // namespace

const OpTemplate& reduce_template(const std::string& op) {
  return family_template<Reduce>(reduce_ops(), op, "reduce");
}

}  // namespace kiln::schedules
