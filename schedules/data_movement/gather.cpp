#include "schedules/data_movement/gather.h"

#include <algorithm>
#include <cmath>

#include "compiler/base/error.h"
#include "compiler/te/schedule.h"

namespace kiln::schedules {

using ir::DataType;
using ir::Expr;
using ir::Var;

namespace {

struct GatherShape {
  int64_t outer, n, inner, k;
};

GatherShape gather_shape(const Workload& w) {
  return {w.param("outer"), w.param("N"), w.param("inner"), w.param("K")};
}

// The row an index value selects: truncated (indices are whole numbers held in f32), counted
// from the end when negative. ONNX makes an index outside [-n, n-1] an error, and so does the
// kernel (its status KILN_STATUS_INDEX_OUT_OF_RANGE); the reference refuses it alike.
int64_t row_of(double index, int64_t n) {
  user_check(index >= -double(n) && index < double(n))
      << "gather: index " << index << " is out of range for an axis of " << n;
  int64_t i = static_cast<int64_t>(std::trunc(index));
  return i < 0 ? i + n : i;
}

class Gather : public OpTemplate {
 public:
  std::string name() const override { return "gather.rows"; }
  std::string op() const override { return "gather"; }
  bool applies(const Workload& w, const Target&) const override {
    return w.op == op() && w.dtype == DataType::f32();
  }
  std::vector<DataType> dtypes() const override { return {DataType::f32()}; }

  ConfigSpace space(const Workload& w, const Target&) const override {
    gather_shape(w);
    ConfigSpace cs;
    cs.define_knob("vecs", {0, 1, 2});   // vectors per step along a row (0: scalar)
    cs.define_knob("parallel", {0, 1});  // rows shared among threads
    return cs;
  }
  Config fallback(const Workload& w, const Target& t) const override {
    GatherShape s = gather_shape(w);
    const bool big = s.outer * s.k * s.inner * 4 >= (64 << 10);  // worth waking threads
    return Config({{"vecs", s.inner >= t.lanes(DataType::f32()) ? 1 : 0}, {"parallel", big}});
  }

  std::vector<TensorSpec> inputs(const Workload& w) const override {
    GatherShape s = gather_shape(w);
    return {{"data", {s.outer, s.n, s.inner}}, {"indices", {s.k}}};
  }
  TensorSpec output(const Workload& w) const override {
    GatherShape s = gather_shape(w);
    return {"out", {s.outer, s.k, s.inner}};
  }

  Values reference(const Workload& w, const std::vector<Values>& in) const override {
    GatherShape s = gather_shape(w);
    Values out(static_cast<size_t>(s.outer * s.k * s.inner));
    for (int64_t o = 0; o < s.outer; ++o)
      for (int64_t j = 0; j < s.k; ++j) {
        const int64_t row = row_of(in[1][j], s.n);
        for (int64_t i = 0; i < s.inner; ++i)
          out[(o * s.k + j) * s.inner + i] = in[0][(o * s.n + row) * s.inner + i];
      }
    return out;
  }

 protected:
  ScheduledKernel schedule(const Workload& w, const Target& t,
                           const Config& cfg) const override {
    GatherShape s = gather_shape(w);
    te::Tensor data = te::placeholder({s.outer, s.n, s.inner}, DataType::f32(), "data");
    te::Tensor indices = te::placeholder({s.k}, DataType::f32(), "indices");
    te::Tensor out = te::compute(
        {s.outer, s.k, s.inner},
        [&](Var o, Var j, Var i) {
          // Checked in f32, before the conversion: a huge or NaN index has no integer value.
          const Expr index = ir::make_in_range(indices(j), ir::make_float(DataType::f32(), -double(s.n)),
                                               ir::make_float(DataType::f32(), double(s.n)));
          Expr row = ir::make_cast(DataType::index(), index);
          const Expr zero(0), n(static_cast<int>(s.n));
          row = ir::make_select(row < zero, row + n, row);
          return data(o, row, i);
        },
        "out");
    te::Schedule sch({out});
    te::Stage st = sch[out];
    auto rows = st.fuse(st.axis(0), st.axis(1));
    if (cfg["parallel"] && s.outer * s.k > 1) st.parallel(rows);
    if (cfg["vecs"] > 0) {
      const int64_t lanes = t.lanes(DataType::f32());
      auto [io, ii] = st.split(st.axis(2), lanes * cfg["vecs"]);
      auto [v, l] = st.split(ii, lanes);
      st.unroll(v);
      st.vectorize(l);
    }
    return logical_kernel(std::move(sch), {data, indices, out}, inputs(w), output(w),
                          double(s.outer * s.k * s.inner));
  }
};

}  // namespace

const OpTemplate& gather_template() {
  static const Gather k;
  return k;
}

}  // namespace kiln::schedules
