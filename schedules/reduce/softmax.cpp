#include "schedules/reduce/softmax.h"

#include <algorithm>
#include <cmath>
#include <functional>

#include "compiler/base/error.h"
#include "compiler/te/schedule.h"
#include "schedules/math.h"
#include "schedules/reduce/row_reduce.h"
#include "schedules/run_time_dims.h"

namespace kiln::schedules {

using ir::DataType;
using ir::Expr;
using ir::Var;

namespace {

// The longest row softmax buffers on the stack of a pool thread (64 KiB of f32).
constexpr int64_t kMaxRowBuffer = 16384;

const std::vector<DataType>& row_dtypes() {
  static const std::vector<DataType> k = {DataType::f32(), DataType::f16(), DataType::bf16()};
  return k;
}

// A reduction over each of the m rows of `value(i, j)` (schedules/reduce/row_reduce.h).
RowReduce rows_reduce(Expr m, Expr n, int64_t r, bool is_max,
                      const std::function<Expr(Expr, Expr)>& value, const std::string& name) {
  return row_reduce(
      {m}, n, r, is_max, [&](const std::vector<Expr>& row, Expr j) { return value(row[0], j); },
      name);
}

struct RowShape {
  int64_t m, n;
};

RowShape row_shape(const Workload& w) {
  RowShape s{w.param("M"), w.param("N")};
  user_check(s.m > 0 && s.n > 0) << w.op << ": M and N must be positive, got " << s.m << ", "
                                 << s.n << " in " << w.str();
  return s;
}

// The knobs both row templates share; softmax adds a third way to fuse rows.
ConfigSpace row_space(const Target& t, std::vector<int64_t> row_fused = {0, 1}) {
  const int64_t lanes = t.lanes(DataType::f32());
  ConfigSpace cs;
  cs.define_knob("partials", {1, lanes, 2 * lanes});
  cs.define_knob("row_fused", row_fused);
  cs.define_knob("parallel", {0, 1});
  return cs;
}

Config row_fallback(const RowShape& s, const Target& t) {
  const int64_t lanes = t.lanes(DataType::f32());
  return Config({{"partials", s.n >= 2 * lanes * 4 ? 2 * lanes : (s.n >= lanes ? lanes : 1)},
                 {"row_fused", 1},
                 // Threads pay off once there is more than a few pages of rows to normalise.
                 {"parallel", s.m > 1 && s.m * s.n >= 16384 ? 1 : 0}});
}

// Two chained row reductions (the second's values read the first's total) and `first_out`,
// the output's own copy of the first when row-fused (otherwise `first` itself). Row-fused,
// the second and first_out live in the output's row loop and the first in the second's;
// otherwise both are root stages.
void schedule_row_pair(te::Schedule& sch, const RowReduce& first, const RowReduce& first_out,
                       const RowReduce& second, const te::Stage& out, bool fused, bool parallel) {
  if (!fused) {
    schedule_row_reduce(sch, first, nullptr, {}, parallel);
    schedule_row_reduce(sch, second, nullptr, {}, parallel);
    return;
  }
  schedule_row_reduce(sch, second, &out, out.axis(0), parallel);
  schedule_row_reduce(sch, first_out, &out, out.axis(0), parallel);
  // The first's total inside the second's row, before the stages of the second that read it.
  te::Stage reader = sch[second.total];
  schedule_row_reduce(sch, first, &reader, reader.axis(0), parallel);
}

// What both row templates share: the M x N workload, its space and fallback, the output.
class RowTemplate : public OpTemplate {
 public:
  bool applies(const Workload& w, const Target&) const override { return w.op == op(); }
  // The rows (tokens of a sequence) and the row length (attention's keys).
  std::vector<std::string> run_time_params() const override { return {"M", "N"}; }
  ConfigSpace space(const Workload& w, const Target& t) const override {
    row_shape(w);
    return row_space(t);
  }
  Config fallback(const Workload& w, const Target& t) const override {
    return row_fallback(row_shape(w), t);
  }
  TensorSpec output(const Workload& w) const override {
    RowShape s = row_shape(w);
    return {"Y", {s.m, s.n}};
  }
};

// The output: one vectorized pass per row, rows parallel when asked.
te::Stage schedule_rows_out(te::Schedule& sch, const te::Tensor& y, const Target& t,
                            bool parallel) {
  te::Stage out = sch[y];
  auto [jo, jl] = out.split(out.axis(1), t.lanes(DataType::f32()));
  out.vectorize(jl);
  if (parallel) out.parallel(out.axis(0));
  return out;
}

class Softmax : public RowTemplate {
 public:
  std::string name() const override { return "softmax.rows"; }
  std::string op() const override { return "softmax"; }
  std::vector<TensorSpec> inputs(const Workload& w) const override {
    RowShape s = row_shape(w);
    return {{"X", {s.m, s.n}}};
  }
  ConfigSpace space(const Workload& w, const Target& t) const override {
    RowShape s = row_shape(w);
    // 2: row-buffered, when the row's buffer fits the stack comfortably (a row length
    // taken at run time is buffered at its declared maximum, and only with one).
    return row_buffer_fits(w) ? row_space(t, {0, 1, 2}) : row_space(t);
  }
  Config fallback(const Workload& w, const Target& t) const override {
    RowShape s = row_shape(w);
    Config c = row_fallback(s, t);
    // Row-buffered is 1.2-1.7x row-fused on attention's rows (N = 77 to 1024, Zen 3).
    if (row_buffer_fits(w)) c.set("row_fused", 2);
    return c;
  }

  Values reference(const Workload& w, const std::vector<Values>& in) const override {
    RowShape s = row_shape(w);
    Values y(static_cast<size_t>(s.m * s.n));
    for (int64_t i = 0; i < s.m; ++i) {
      const float* x = &in[0][static_cast<size_t>(i * s.n)];
      double mx = *std::max_element(x, x + s.n), sum = 0;
      for (int64_t j = 0; j < s.n; ++j) sum += std::exp(double(x[j]) - mx);
      for (int64_t j = 0; j < s.n; ++j)
        y[static_cast<size_t>(i * s.n + j)] = static_cast<float>(std::exp(double(x[j]) - mx) / sum);
    }
    return y;
  }

  std::vector<DataType> dtypes() const override { return row_dtypes(); }

 protected:
  ScheduledKernel schedule(const Workload& w, const Target& t,
                           const Config& cfg) const override {
    RowShape s = row_shape(w);
    const DataType f32 = DataType::f32();
    const int64_t r = cfg["partials"];
    const bool fused = cfg["row_fused"] != 0, parallel = cfg["parallel"] != 0;
    RunTimeDims dims(w);
    const Expr m = dims.extent("M"), n = dims.extent("N");

    te::Tensor x = te::placeholder({m, n}, w.dtype, "X");
    auto xf = [&](Expr i, Expr j) { return ir::make_cast(f32, x(i, j)); };
    if (cfg["row_fused"] == 2) return row_buffered(w, t, s, r, parallel, x, dims);
    RowReduce mx = rows_reduce(m, n, r, true, xf, "X.max");
    // Row-fused, the output reads its own copy of the max (see softmax.h); otherwise the
    // exponentials are stored once and read back.
    RowReduce mx_out = fused ? rows_reduce(m, n, r, true, xf, "X.max.out") : mx;
    te::Tensor e;
    if (!fused)
      e = te::compute(
          {m, n}, [&](Var i, Var j) { return math::exp_nonpositive(xf(i, j) - mx.total(i)); }, "E");
    auto exp_at = [&](Expr i, Expr j, const RowReduce& row_max) {
      return fused ? math::exp_nonpositive(xf(i, j) - row_max.total(i)) : e(i, j);
    };
    RowReduce sum = rows_reduce(
        m, n, r, false, [&](Expr i, Expr j) { return exp_at(i, j, mx); }, "E.sum");
    te::Tensor y = te::compute(
        {m, n},
        [&](Var i, Var j) {
          Expr inv = ir::make_float(f32, 1.0) / sum.total(i);
          return ir::make_cast(w.dtype, exp_at(i, j, mx_out) * inv);
        },
        "Y");

    te::Schedule sch({y});
    te::Stage out = schedule_rows_out(sch, y, t, parallel);
    schedule_row_pair(sch, mx, mx_out, sum, out, fused, parallel);
    if (!fused) {
      te::Stage es = sch[e];
      auto [jo, jl] = es.split(es.axis(1), t.lanes(f32));
      es.vectorize(jl);
      if (parallel) es.parallel(es.axis(0));
    }
    ScheduledKernel k =
        logical_kernel(std::move(sch), {x, y}, inputs(w), output(w), 6.0 * double(s.m * s.n));
    dims.attach(k);
    return k;
  }

 private:
  // A row taken at run time is buffered at its declared maximum.
  static bool row_buffer_fits(const Workload& w) {
    if (!w.at_run_time("N")) return row_shape(w).n <= kMaxRowBuffer;
    auto max = w.run_time_max.find("N");
    return max != w.run_time_max.end() && max->second <= kMaxRowBuffer;
  }

  // Row-buffered: per row, the max, then the exponentials into a row buffer on the stack
  // with their sum, then the buffer scaled: one exp per element where row-fused computes
  // two (the sum's and the output's), and X read from memory once.
  // `dims`: the run-time sizes `x` was declared with.
  ScheduledKernel row_buffered(const Workload& w, const Target& t, const RowShape& s, int64_t r,
                               bool parallel, const te::Tensor& x, const RunTimeDims& dims) const {
    const DataType f32 = DataType::f32();
    const Expr m = dims.extent("M"), n = dims.extent("N");
    auto xf = [&](Expr i, Expr j) { return ir::make_cast(f32, x(i, j)); };
    RowReduce mx = rows_reduce(m, n, r, true, xf, "X.max");
    te::Tensor e = te::compute(
        {m, n}, [&](Var i, Var j) { return math::exp_nonpositive(xf(i, j) - mx.total(i)); }, "E");
    RowReduce sum = rows_reduce(
        m, n, r, false, [&](Expr i, Expr j) { return e(i, j); }, "E.sum");
    te::Tensor y = te::compute(
        {m, n},
        [&](Var i, Var j) {
          return ir::make_cast(w.dtype, e(i, j) * (ir::make_float(f32, 1.0) / sum.total(i)));
        },
        "Y");
    te::Schedule sch({y});
    te::Stage out = schedule_rows_out(sch, y, t, parallel);
    schedule_row_reduce(sch, sum, &out, out.axis(0), parallel);
    te::Stage es = sch[e];
    es.set_scope(ir::MemScope::Local);
    es.compute_at(out, out.axis(0));
    auto [jo, jl] = es.split(es.axis(1), t.lanes(f32));
    es.vectorize(jl);
    schedule_row_reduce(sch, mx, &out, out.axis(0), parallel);
    ScheduledKernel k =
        logical_kernel(std::move(sch), {x, y}, inputs(w), output(w), 6.0 * double(s.m * s.n));
    dims.attach(k);
    return k;
  }
};

class LayerNorm : public RowTemplate {
 public:
  std::string name() const override { return "layer_norm.rows"; }
  std::string op() const override { return "layer_norm"; }
  std::vector<TensorSpec> inputs(const Workload& w) const override {
    RowShape s = row_shape(w);
    return {{"X", {s.m, s.n}}, {"gamma", {s.n}}, {"beta", {s.n}}};
  }
  static double epsilon(const Workload& w) {
    const double e = w.real_or("eps", 1e-5f);
    user_check(e > 0 && std::isfinite(e)) << "layer_norm: eps (epsilon) must be positive, got " << e;
    return e;
  }

  Values reference(const Workload& w, const std::vector<Values>& in) const override {
    RowShape s = row_shape(w);
    const double eps = epsilon(w);
    Values y(static_cast<size_t>(s.m * s.n));
    for (int64_t i = 0; i < s.m; ++i) {
      const float* x = &in[0][static_cast<size_t>(i * s.n)];
      double mean = 0, var = 0;
      for (int64_t j = 0; j < s.n; ++j) mean += x[j];
      mean /= double(s.n);
      for (int64_t j = 0; j < s.n; ++j) var += (x[j] - mean) * (x[j] - mean);
      var /= double(s.n);
      double inv = 1.0 / std::sqrt(var + eps);
      for (int64_t j = 0; j < s.n; ++j)
        y[static_cast<size_t>(i * s.n + j)] =
            static_cast<float>((x[j] - mean) * inv * in[1][j] + in[2][j]);
    }
    return y;
  }

  std::vector<DataType> dtypes() const override { return row_dtypes(); }

 protected:
  ScheduledKernel schedule(const Workload& w, const Target& t,
                           const Config& cfg) const override {
    RowShape s = row_shape(w);
    const DataType f32 = DataType::f32();
    const int64_t r = cfg["partials"];
    const bool fused = cfg["row_fused"] != 0, parallel = cfg["parallel"] != 0;
    RunTimeDims dims(w);
    const Expr m = dims.extent("M"), n = dims.extent("N");
    const Expr inv_n = w.at_run_time("N") ? ir::make_float(f32, 1.0) / ir::make_cast(f32, n)
                                          : ir::make_float(f32, 1.0 / double(s.n));
    const Expr eps = ir::make_float(f32, epsilon(w));

    te::Tensor x = te::placeholder({m, n}, w.dtype, "X");
    te::Tensor gamma = te::placeholder({n}, w.dtype, "gamma");
    te::Tensor beta = te::placeholder({n}, w.dtype, "beta");
    auto xf = [&](Expr i, Expr j) { return ir::make_cast(f32, x(i, j)); };
    RowReduce mean = rows_reduce(m, n, r, false, xf, "X.sum");
    RowReduce mean_out = fused ? rows_reduce(m, n, r, false, xf, "X.sum.out") : mean;
    RowReduce var = rows_reduce(
        m, n, r, false,
        [&](Expr i, Expr j) {
          Expr d = xf(i, j) - mean.total(i) * inv_n;
          return d * d;
        },
        "X.var");
    te::Tensor y = te::compute(
        {m, n},
        [&](Var i, Var j) {
          Expr rstd = ir::make_float(f32, 1.0) /
                      ir::make_call(f32, "sqrt", {var.total(i) * inv_n + eps});
          Expr v = (xf(i, j) - mean_out.total(i) * inv_n) * rstd;
          return ir::make_cast(w.dtype, v * ir::make_cast(f32, gamma(j)) + ir::make_cast(f32, beta(j)));
        },
        "Y");

    te::Schedule sch({y});
    te::Stage out = schedule_rows_out(sch, y, t, parallel);
    schedule_row_pair(sch, mean, mean_out, var, out, fused, parallel);
    ScheduledKernel k = logical_kernel(std::move(sch), {x, gamma, beta, y}, inputs(w), output(w),
                                       8.0 * double(s.m * s.n));
    dims.attach(k);
    return k;
  }
};

}  // namespace

const OpTemplate& softmax_template() {
  static const Softmax t;
  return t;
}
const OpTemplate& layer_norm_template() {
  static const LayerNorm t;
  return t;
}

}  // namespace kiln::schedules
