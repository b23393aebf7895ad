#include "schedules/dense/batch_matmul.h"

#include <algorithm>

#include "compiler/base/error.h"
#include "compiler/te/schedule.h"
#include "schedules/parallel_rule.h"
#include "schedules/run_time_dims.h"

namespace kiln::schedules {

using ir::DataType;
using ir::Expr;
using ir::Var;

namespace {

struct BmmShape {
  int64_t b, m, n, k;
  bool ta, tb;
  double flops() const { return 2.0 * double(b) * double(m) * double(n) * double(k); }
};

BmmShape bmm_shape(const Workload& w) {
  BmmShape s{w.param("B"), w.param("M"), w.param("N"), w.param("K"),
             w.param_or("transpose_a", 0) != 0, w.param_or("transpose_b", 0) != 0};
  user_check(s.b > 0 && s.m > 0 && s.n > 0 && s.k > 0)
      << "batch_matmul: B, M, N, K must be positive, got " << s.b << ", " << s.m << ", " << s.n
      << ", " << s.k << " in " << w.str();
  for (const char* p : {"transpose_a", "transpose_b"})
    user_check(w.param_or(p, 0) == 0 || w.param_or(p, 0) == 1)
        << "batch_matmul: " << p << " must be 0 or 1 in " << w.str();
  return s;
}

class BatchMatmul : public OpTemplate {
 public:
  std::string name() const override { return "batch_matmul.tiled"; }
  std::string op() const override { return "batch_matmul"; }
  bool applies(const Workload& w, const Target&) const override { return w.op == op(); }
  // Attention's products over a sequence: scores (M and N the tokens), then the weighted
  // values (M and K).
  std::vector<std::string> run_time_params() const override { return {"B", "M", "N", "K"}; }

  ConfigSpace space(const Workload& w, const Target&) const override {
    BmmShape s = bmm_shape(w);
    ConfigSpace cs;
    std::vector<int64_t> mr;
    for (int64_t m : {1, 2, 4, 6, 8})
      if (m <= s.m) mr.push_back(m);
    cs.define_knob("mr", mr);
    cs.define_knob("nr_vecs", {1, 2, 3, 4});
    cs.define_knob("k_unroll", {1, 2, 4});
    // A panel of B copied per column block needs K compiled in (its buffer's size).
    cs.define_knob("pack_b",
                   w.at_run_time("K") ? std::vector<int64_t>{0} : std::vector<int64_t>{0, 1});
    cs.define_knob("parallel", {0, 1});
    return cs;
  }

  Config fallback(const Workload& w, const Target& t) const override {
    BmmShape s = bmm_shape(w);
    const int64_t lanes = t.lanes(DataType::f32());
    // As dense.packed: accumulators fill most vector registers (24 of 32 zmm, 12 of 16
    // ymm, 24 of 32 NEON v), but never wider than N needs.
    int64_t mr = lanes >= 16 ? 6 : (t.is_x86() ? 6 : 8);
    int64_t vecs = lanes >= 16 ? 4 : (t.is_x86() ? 2 : 3);
    vecs = std::clamp<int64_t>((s.n + lanes - 1) / lanes, 1, vecs);
    for (int64_t m : {8, 6, 4, 2, 1})
      if (m <= mr && m <= s.m) {
        mr = m;
        break;
      }
    return Config({{"mr", mr},
                   {"nr_vecs", vecs},
                   {"k_unroll", 1},
                   {"pack_b", s.tb && !w.at_run_time("K") ? 1 : 0},
                   {"parallel", worth_parallel(s.flops()) ? 1 : 0}});
  }

  std::vector<TensorSpec> inputs(const Workload& w) const override {
    BmmShape s = bmm_shape(w);
    return {{"A", {s.b, s.ta ? s.k : s.m, s.ta ? s.m : s.k}},
            {"B", {s.b, s.tb ? s.n : s.k, s.tb ? s.k : s.n}}};
  }
  TensorSpec output(const Workload& w) const override {
    BmmShape s = bmm_shape(w);
    return {"C", {s.b, s.m, s.n}};
  }

  Values reference(const Workload& w, const std::vector<Values>& in) const override {
    BmmShape s = bmm_shape(w);
    Values c(static_cast<size_t>(s.b * s.m * s.n));
    for (int64_t b = 0; b < s.b; ++b)
      for (int64_t i = 0; i < s.m; ++i)
        for (int64_t j = 0; j < s.n; ++j) {
          double acc = 0;
          for (int64_t k = 0; k < s.k; ++k) {
            double a = in[0][(b * s.m * s.k) + (s.ta ? k * s.m + i : i * s.k + k)];
            double bb = in[1][(b * s.k * s.n) + (s.tb ? j * s.k + k : k * s.n + j)];
            acc += a * bb;
          }
          c[(b * s.m + i) * s.n + j] = static_cast<float>(acc);
        }
    return c;
  }

 protected:
  ScheduledKernel schedule(const Workload& w, const Target& t,
                           const Config& cfg) const override {
    BmmShape s = bmm_shape(w);
    const DataType f32 = DataType::f32();
    const int64_t lanes = t.lanes(f32), mr = cfg["mr"], nr = cfg["nr_vecs"] * lanes;
    RunTimeDims dims(w);
    const Expr b = dims.extent("B"), m = dims.extent("M"), n = dims.extent("N"),
               k = dims.extent("K");
    const bool n_whole_panels = !w.at_run_time("N") && s.n % nr == 0;
    const Expr panels =
        w.at_run_time("N") ? ir::floordiv(n + (nr - 1), Expr(nr)) : Expr((s.n + nr - 1) / nr);
    auto in = inputs(w);
    te::Tensor a = te::placeholder({b, s.ta ? k : m, s.ta ? m : k}, w.dtype, "A");
    te::Tensor bt = te::placeholder({b, s.tb ? n : k, s.tb ? k : n}, w.dtype, "B");
    auto a_at = [&](Expr bi, Expr i, Expr ki) { return s.ta ? a(bi, ki, i) : a(bi, i, ki); };
    auto b_at = [&](Expr bi, Expr ki, Expr j) { return s.tb ? bt(bi, j, ki) : bt(bi, ki, j); };
    te::Tensor packed;
    if (cfg["pack_b"]) {
      // Panels of nr columns, contiguous along K, zero past N (the clamp keeps the load of
      // a discarded lane in bounds).
      packed = te::compute(
          {b, panels, k, nr},
          [&](Var bi, Var p, Var ki, Var l) {
            Expr j = p * nr + l;
            Expr v = b_at(bi, ki, n_whole_panels ? j : ir::min(j, n - 1));
            return n_whole_panels ? v : ir::make_select(j < n, v, ir::make_zero(w.dtype));
          },
          "B.packed");
    }
    ir::IterVar rk = te::reduce_axis(k, "k");
    // With M or N taken at run time, the register tile is computed whole at the edges too,
    // over rows and columns padded to whole tiles that read the last real row or column, and
    // only C's stores are guarded: a tile guarded lane by lane would run scalar.
    const bool pad_m = w.at_run_time("M"), pad_n = w.at_run_time("N");
    const Expr m_tiles = pad_m ? ir::floordiv(m + (mr - 1), Expr(mr)) * mr : m;
    const Expr n_tiles = pad_n ? panels * nr : n;
    te::Tensor acc = te::compute(
        {b, m_tiles, n_tiles},
        [&](Var bi, Var i, Var j) {
          Expr row = pad_m ? ir::min(i, m - 1) : Expr(i);
          Expr col = pad_n && !packed.defined() ? ir::min(j, n - 1) : Expr(j);
          Expr bv = packed.defined() ? packed(bi, j / nr, rk->var, j % nr) : b_at(bi, rk->var, col);
          return te::sum(ir::make_cast(f32, a_at(bi, row, rk->var)) * ir::make_cast(f32, bv), {rk});
        },
        "C.acc");
    te::Tensor c = te::compute(
        {b, m, n}, [&](Var bi, Var i, Var j) { return ir::make_cast(w.dtype, acc(bi, i, j)); },
        "C");

    te::Schedule sch({c});
    te::Stage out = sch[c];
    auto [io, ii] = out.split(out.axis(1), mr);
    auto [jo, ji] = out.split(out.axis(2), nr);
    auto [jv, jl] = out.split(ji, lanes);
    ir::IterVar batch = out.axis(0);
    out.reorder({batch, jo, io, ii, jv, jl});
    // Batches in parallel (column panels where there is one batch). Not the fused (batch,
    // panel) loop: a fused loop cannot be split into a guard-free body and a tail, so with N
    // not a multiple of the panel every tile would test its bounds (ViT's 197 x 197 scores
    // ran 30x slower).
    if (cfg["parallel"]) out.parallel(s.b > 1 ? batch : jo);
    out.vectorize(jl);
    te::Stage tile = sch[acc];
    tile.compute_at(out, io);
    schedule_matmul_tile(tile, lanes, cfg["k_unroll"]);
    if (packed.defined()) {
      te::Stage p = sch[packed];
      if (w.at_run_time("N") || w.at_run_time("B")) {
        // A buffer sized at run time cannot be allocated: one panel at a time instead, in
        // the column block that reads it.
        p.set_scope(ir::MemScope::Local);
        p.compute_at(out, jo);
      } else if (cfg["parallel"]) {
        p.parallel(p.axis(0));  // at the root: its workspace buffer, batches in parallel
      }
      // Without transpose_b, a panel row is a contiguous slice of a B row: copy by vectors.
      if (!s.tb) p.vectorize(p.axis(3));
    }

    ScheduledKernel kernel = logical_kernel(std::move(sch), {a, bt, c}, in, output(w), s.flops());
    dims.attach(kernel);
    return kernel;
  }
};

}  // namespace

void schedule_matmul_tile(te::Stage& tile, int64_t lanes, int64_t k_unroll) {
  tile.set_scope(ir::MemScope::Local);
  auto [tv, tl] = tile.split(tile.axis(2), lanes);
  ir::IterVar kk = tile.reduce_axis(0);
  if (k_unroll > 1) {
    auto [ko, ki] = tile.split(kk, k_unroll);
    tile.reorder({tile.axis(0), ko, ki, tile.axis(1), tv, tl});
    tile.unroll(ki);
  } else {
    tile.reorder({tile.axis(0), kk, tile.axis(1), tv, tl});
  }
  tile.unroll(tile.axis(1));
  tile.unroll(tv);
  tile.vectorize(tl);
}

const OpTemplate& batch_matmul_template() {
  static const BatchMatmul t;
  return t;
}

}  // namespace kiln::schedules
