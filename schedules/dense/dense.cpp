#include "schedules/dense/dense.h"

#include <algorithm>

#include "compiler/base/error.h"
#include "schedules/epilogue.h"
#include "schedules/parallel_rule.h"
#include "schedules/run_time_dims.h"

namespace kiln::schedules {

using ir::DataType;
using ir::Expr;
using ir::Var;

DenseOp dense_compute(const DenseShape& s, DataType in, DataType out) {
  user_check(s.m > 0 && s.n > 0 && s.k > 0) << "dense: M, N, K must be positive, got " << s.m
                                            << ", " << s.n << ", " << s.k;
  DenseOp op;
  op.a = te::placeholder({s.m, s.k}, in, "A");
  op.b = te::placeholder({s.k, s.n}, in, "B");
  ir::IterVar k = te::reduce_axis(s.k, "k");
  DataType acc = DataType::f32();
  op.c = te::compute(
      {s.m, s.n},
      [&](Var i, Var j) {
        Expr prod = ir::make_cast(acc, op.a(i, k)) * ir::make_cast(acc, op.b(k, j));
        return te::sum(prod, {k});
      },
      "C");
  if (out != acc) {
    te::Tensor c32 = op.c;
    op.c = te::compute({s.m, s.n}, [&](Var i, Var j) { return ir::make_cast(out, c32(i, j)); },
                       "C.out");
  }
  return op;
}

std::vector<float> pack_dense_b(const DenseShape& s, int64_t nr, const float* b) {
  int64_t panels = (s.n + nr - 1) / nr;
  std::vector<float> packed(static_cast<size_t>(panels * s.k * nr), 0.0f);
  for (int64_t p = 0; p < panels; ++p)
    for (int64_t k = 0; k < s.k; ++k)
      for (int64_t j = 0; j < nr && p * nr + j < s.n; ++j)
        packed[(p * s.k + k) * nr + j] = b[k * s.n + p * nr + j];
  return packed;
}

namespace {

class DensePacked : public OpTemplate {
 public:
  std::string name() const override { return "dense.packed"; }
  std::string op() const override { return "dense"; }

  bool applies(const Workload& w, const Target&) const override {
    return w.op == "dense";
  }

  ConfigSpace space(const Workload& w, const Target&) const override {
    DenseShape s = dense_shape(w);
    ConfigSpace cs;
    cs.define_knob("mr", row_tile_choices(s.m, {1, 2, 4, 6, 8, 12}));
    // A GEMV (M = 1) may keep 8 vectors of columns: its only independent accumulators.
    cs.define_knob("nr_vecs", s.m == 1 ? std::vector<int64_t>{1, 2, 3, 4, 8}
                                       : std::vector<int64_t>{1, 2, 3, 4});
    cs.define_knob("k_unroll", {1, 2, 4, 8});
    define_dense_loop_knobs(cs, s);
    return cs;
  }

  Config fallback(const Workload& w, const Target& t) const override {
    DenseShape s = dense_shape(w);
    int lanes = t.lanes(ir::DataType::f32());
    // Accumulators fill most of the vector registers: 24 of 32 zmm / v, 12 of 16 ymm.
    int64_t mr = lanes >= 16 ? 6 : (t.is_x86() ? 6 : 8);
    int64_t vecs = lanes >= 16 ? 4 : (t.is_x86() ? 2 : 3);
    // A GEMV streams B once: wide rows, no row tile. On AArch64, 8 vectors: each FMLA waits on
    // its accumulator's last, and two 4-cycle FMLA pipes (Neoverse-N1) need 8 in flight; with
    // 4, 49% of their peak by llvm-mca.
    if (s.m == 1) mr = 1, vecs = t.is_aarch64() ? 8 : 4;
    mr = fit_rows(mr, s.m, {12, 8, 6, 4, 2, 1});
    // Threads when the arithmetic pays for the hand-off (parallel_rule.h), or when the kernel
    // is memory-bound on more weight bytes than one core streams quickly (a GEMV).
    bool parallel = worth_parallel(s.flops()) || s.k * s.n * w.dtype.bytes() > (256 << 10);
    return Config({{"mr", mr}, {"nr_vecs", vecs}, {"k_unroll", 1}, {"panels_outer", 1},
                   {"parallel", parallel ? 1 : 0}, {"kc", 0}, {"mc_tiles", 1}});
  }

  std::vector<TensorSpec> inputs(const Workload& w) const override {
    DenseShape s = dense_shape(w);
    std::vector<TensorSpec> in = {{"A", {s.m, s.k}}, {"B", {s.k, s.n}}};
    auto extra = epilogue_inputs(w, s.n, {s.m, s.n});
    in.insert(in.end(), extra.begin(), extra.end());
    return in;
  }
  TensorSpec output(const Workload& w) const override {
    DenseShape s = dense_shape(w);
    return {"C", {s.m, s.n}};
  }

  Values reference(const Workload& w, const std::vector<Values>& in) const override {
    DenseShape s = dense_shape(w);
    Values c(s.m * s.n);
    dense_reference(s, in[0].data(), in[1].data(), c.data());
    std::vector<const Values*> extra;
    for (size_t i = 2; i < in.size(); ++i) extra.push_back(&in[i]);
    for (int64_t i = 0; i < s.m; ++i)
      for (int64_t j = 0; j < s.n; ++j)
        c[i * s.n + j] = static_cast<float>(
            apply_epilogue_reference(w, extra, c[i * s.n + j], j, i * s.n + j));
    return c;
  }

  std::vector<std::string> epilogues() const override { return epilogue_names(); }
  // The rows: a sequence length, or a batch times one.
  std::vector<std::string> run_time_params() const override { return {"M"}; }

 protected:
  ScheduledKernel schedule(const Workload& w, const Target& t,
                           const Config& cfg) const override {
    DenseShape s = dense_shape(w);
    const int64_t lanes = t.lanes(DataType::f32());
    const int64_t nr = cfg["nr_vecs"] * lanes, mr = cfg["mr"];
    const int64_t panels = ceil_div(s.n, nr);
    DataType f32 = DataType::f32();
    RunTimeDims dims(w);
    const Expr m = dims.extent("M");

    te::Tensor a = te::placeholder({m, s.k}, w.dtype, "A");
    te::Tensor b = te::placeholder({panels, s.k, nr}, w.dtype, "B.packed");
    EpilogueTensors ep = make_epilogue_placeholders(w, s.n, {m, s.n});
    ir::IterVar k = te::reduce_axis(s.k, "k");
    te::Tensor acc = te::compute(
        {m, s.n},
        [&](Var i, Var j) {
          return te::sum(ir::make_cast(f32, a(i, k)) * ir::make_cast(f32, b(j / nr, k, j % nr)), {k});
        },
        "C.acc");
    te::Tensor c = te::compute(
        {m, s.n},
        [&](Var i, Var j) {
          return ir::make_cast(w.dtype, apply_epilogue(w, ep, acc(i, j), {i, j}, j));
        },
        "C");

    te::Schedule sch({c});
    DenseTiling tiling = dense_tiling(cfg, mr, nr, lanes);
    ir::IterVar at = schedule_dense_output(sch, c, tiling);
    schedule_dense_tile(sch, acc, c, at, tiling, {sch[acc].reduce_axis(0)});
    auto pack = [s, nr](const Values& v) { return pack_dense_b(s, nr, v.data()); };
    ScheduledKernel kernel =
        finish_dense(*this, w, std::move(sch), a, b, ep, c, pack, panels * s.k * nr);
    dims.attach(kernel);
    return kernel;
  }
};

}  // namespace

const OpTemplate& dense_packed_template() {
  static const DensePacked t;
  return t;
}

void dense_reference(const DenseShape& s, const float* a, const float* b, float* c) {
  for (int64_t i = 0; i < s.m; ++i)
    for (int64_t j = 0; j < s.n; ++j) {
      double acc = 0;
      for (int64_t k = 0; k < s.k; ++k) acc += double(a[i * s.k + k]) * double(b[k * s.n + j]);
      c[i * s.n + j] = static_cast<float>(acc);
    }
}

DenseShape dense_shape(const Workload& w) {
  DenseShape s{w.param("M"), w.param("N"), w.param("K")};
  user_check(s.m > 0 && s.n > 0 && s.k > 0)
      << "dense: M, N, K must be positive, got " << s.m << ", " << s.n << ", " << s.k;
  return s;
}

std::vector<int64_t> row_tile_choices(int64_t m, std::initializer_list<int64_t> choices) {
  std::vector<int64_t> out;
  for (int64_t r : choices)
    if (r <= std::max<int64_t>(m, 1)) out.push_back(r);
  return out;
}

int64_t fit_rows(int64_t want, int64_t m, std::initializer_list<int64_t> choices) {
  for (int64_t r : choices)
    if (r <= want && r <= m) return r;
  return 1;
}

DenseTiling dense_tiling(const Config& cfg, int64_t mr, int64_t nr, int64_t lanes) {
  DenseTiling t{mr, nr, lanes};
  t.panels_outer = cfg["panels_outer"] != 0;
  t.parallel = cfg["parallel"];
  if (cfg.has("kc")) t.kc = cfg["kc"];
  if (cfg.has("mc_tiles")) t.mc_tiles = cfg["mc_tiles"];
  if (cfg.has("k_unroll")) t.k_unroll = cfg["k_unroll"];
  return t;
}

void define_dense_loop_knobs(ConfigSpace& cs, const DenseShape& s) {
  cs.define_knob("panels_outer", {0, 1});  // loop order: column panels or row blocks outside
  cs.define_knob("parallel", {0, 1, 2});   // serial, outer loop, second loop (DenseTiling)
  // K blocks that keep a kc x nr slice of B in L1 (32-48 KB: kc <= 256 at nr = 32) or L2;
  // only those that split K.
  std::vector<int64_t> kc = {0};
  for (int64_t b : {32, 64, 128, 256, 512})
    if (b < s.k) kc.push_back(b);
  cs.define_knob("kc", kc, /*legacy_default=*/0);  // logs before K blocking: no K blocks
  std::vector<int64_t> mc = {1};
  for (int64_t b : {2, 4, 8, 16})
    if (b < s.m) mc.push_back(b);
  cs.define_knob("mc_tiles", mc, /*legacy_default=*/1);
}

ir::IterVar schedule_dense_output(te::Schedule& sch, const te::Tensor& c, const DenseTiling& t) {
  te::Stage out = sch[c];
  auto [io, ii] = out.split(out.axis(0), t.mr);
  auto [jo, ji] = out.split(out.axis(1), t.nr);
  auto [jv, jl] = out.split(ji, t.lanes);
  // Blocked: row tiles grouped in blocks of mc_tiles; the accumulators of a block are
  // computed at the block (or panel) loop, the tile loop `it` below reads them.
  std::vector<ir::IterVar> tile_loops = {ii, jv, jl};
  ir::IterVar rows = io;
  if (t.blocked()) {
    auto [ib, it] = out.split(io, t.mc_tiles);
    rows = ib;
    tile_loops.insert(tile_loops.begin(), it);
  }
  std::vector<ir::IterVar> outer = t.panels_outer ? std::vector<ir::IterVar>{jo, rows}
                                                  : std::vector<ir::IterVar>{rows, jo};
  std::vector<ir::IterVar> order = outer;
  order.insert(order.end(), tile_loops.begin(), tile_loops.end());
  out.reorder(order);
  out.vectorize(jl);
  if (t.unroll_tile) {
    // Every read of the tile then has a constant offset: LLVM keeps the whole tile in
    // registers (SROA) instead of on the stack.
    out.unroll(ii);
    out.unroll(jv);
  }
  // 2: the inner of the two loops, one parallel region per outer iteration: finer chunks
  // where the outer loop has few iterations. (Fusing the two would give one region, but a
  // fused loop cannot be split into a guard-free body and a tail: every tile would test
  // its bounds, ~30x slower on 512^3 with a 12-row tile.)
  if (t.parallel != 0) out.parallel(outer[t.parallel == 2 ? 1 : 0]);
  return outer[1];
}

void schedule_dense_tile(te::Schedule& sch, const te::Tensor& acc, const te::Tensor& out,
                         const ir::IterVar& at, const DenseTiling& t,
                         const std::vector<ir::IterVar>& reduce) {
  te::Stage tile = sch[acc];
  tile.set_scope(ir::MemScope::Local);
  tile.compute_at(sch[out], at);
  auto [tv, tl] = tile.split(tile.axis(1), t.lanes);
  std::vector<ir::IterVar> order;
  std::vector<ir::IterVar> red = reduce;
  ir::IterVar rows = tile.axis(0);
  if (t.blocked()) {
    // The K block loop outside the block's row tiles: B's kc x nr slice is reused by each.
    if (t.kc > 0) {
      auto [ko, ki] = tile.split(red.front(), t.kc);
      order.push_back(ko);
      red.front() = ki;
    }
    auto [ro, ri] = tile.split(rows, t.mr);
    order.push_back(ro);
    rows = ri;
  }
  if (t.k_unroll > 1) {
    auto [ko, ki] = tile.split(red.back(), t.k_unroll);
    red.back() = ko;
    red.push_back(ki);
  }
  order.insert(order.end(), red.begin(), red.end());
  order.insert(order.end(), {rows, tv, tl});
  tile.reorder(order);
  if (t.k_unroll > 1) tile.unroll(red.back());
  tile.unroll(rows);
  tile.unroll(tv);
  tile.vectorize(tl);
}

ScheduledKernel finish_dense(const OpTemplate& tpl, const Workload& w, te::Schedule sch,
                             const te::Tensor& a, const te::Tensor& b, const EpilogueTensors& ep,
                             const te::Tensor& c, std::function<Values(const Values&)> pack_b,
                             int64_t packed_b_elements) {
  ScheduledKernel k = logical_kernel(std::move(sch), with_epilogue_args({a, b}, ep, c),
                                     tpl.inputs(w), tpl.output(w), dense_shape(w).flops());
  k.args[1].pack = std::move(pack_b);
  k.args[1].kernel_elements = packed_b_elements;
  return k;
}

}  // namespace kiln::schedules
