#include "schedules/attention/attention.h"

#include <algorithm>
#include <cmath>

#include "compiler/base/error.h"
#include "compiler/te/schedule.h"
#include "schedules/dense/batch_matmul.h"
#include "schedules/math.h"
#include "schedules/parallel_rule.h"
#include "schedules/reduce/row_reduce.h"

namespace kiln::schedules {

using ir::DataType;
using ir::Expr;
using ir::Var;

namespace {

// Elements of one block's score buffer (and of its probability buffer): 64 KiB of f32 each,
// on the stack of a pool thread.
constexpr int64_t kMaxBlockScores = kAttentionMaxKeys;
constexpr int64_t kMrChoices[] = {1, 2, 4, 6, 8};

struct AttentionShape {
  int64_t b, m, n, d, e;
  // The mask, when there is one: [mask_batches, mask_rows, N], its batch for batch b
  // (b / mask_every) % mask_batches, its row 0 (mask_rows 1) or the query's (mask_rows M).
  bool mask = false;
  int64_t mask_batches = 1, mask_every = 1, mask_rows = 1;
  double flops() const { return 2.0 * double(b) * double(m) * double(n) * double(d + e); }
  int64_t mask_batch(int64_t batch) const { return (batch / mask_every) % mask_batches; }
};

AttentionShape attention_shape(const Workload& w) {
  AttentionShape s{w.param("B"), w.param("M"), w.param("N"), w.param("D"), w.param("E")};
  user_check(s.b > 0 && s.m > 0 && s.n > 0 && s.d > 0 && s.e > 0)
      << "attention: B, M, N, D, E must be positive, got " << s.b << ", " << s.m << ", " << s.n
      << ", " << s.d << ", " << s.e << " in " << w.str();
  const int64_t mask = w.param_or("mask", 0);
  user_check(mask == 0 || mask == 1) << "attention: mask must be 0 or 1 in " << w.str();
  s.mask = mask == 1;
  if (s.mask) {
    s.mask_batches = w.param_or("mask_batches", 1);
    s.mask_every = w.param_or("mask_every", 1);
    s.mask_rows = w.param_or("mask_rows", 1);
    user_check(s.mask_batches >= 1 && s.mask_every >= 1 && s.mask_batches * s.mask_every <= s.b &&
               (s.mask_rows == 1 || s.mask_rows == s.m))
        << "attention: the mask's mask_batches, mask_every (at least 1, their product at most B) "
        << "and mask_rows (1 or M) do not fit in " << w.str();
  }
  return s;
}

std::vector<int64_t> mr_choices(const AttentionShape& s) {
  std::vector<int64_t> out;
  for (int64_t mr : kMrChoices)
    if (mr <= s.m && mr * s.n <= kMaxBlockScores) out.push_back(mr);
  return out;
}

std::vector<int64_t> vector_choices(int64_t cols, int64_t lanes) {
  std::vector<int64_t> out;
  for (int64_t v : {1, 2, 3, 4})
    if (v == 1 || (v - 1) * lanes < cols) out.push_back(v);
  return out;
}

class Attention : public OpTemplate {
 public:
  std::string name() const override { return "attention.row_blocks"; }
  std::string op() const override { return "attention"; }
  bool applies(const Workload& w, const Target&) const override {
    return w.op == op() && w.param_or("N", 0) <= kMaxBlockScores;
  }
  std::vector<DataType> dtypes() const override { return {DataType::f32()}; }

  ConfigSpace space(const Workload& w, const Target& t) const override {
    AttentionShape s = attention_shape(w);
    const int64_t lanes = t.lanes(DataType::f32());
    std::vector<int64_t> mr = mr_choices(s);
    user_check(!mr.empty()) << "attention: rows of " << s.n << " keys do not fit a block buffer ("
                            << kMaxBlockScores << " scores) in " << w.str();
    ConfigSpace cs;
    cs.define_knob("mr", mr);
    cs.define_knob("nr_vecs", vector_choices(s.n, lanes));
    cs.define_knob("ev", vector_choices(s.e, lanes));
    cs.define_knob("parallel", {0, 1});
    return cs;
  }

  Config fallback(const Workload& w, const Target& t) const override {
    AttentionShape s = attention_shape(w);
    const int64_t lanes = t.lanes(DataType::f32());
    // The accumulators of both tiles fill most vector registers: mr x vectors <= 12 of 16
    // ymm, 24 of 32 zmm or NEON v, never wider than the row needs.
    const int64_t regs = lanes >= 16 || !t.is_x86() ? 24 : 12;
    const int64_t widest = lanes >= 16 || !t.is_x86() ? 4 : 2;
    const int64_t nr = std::min(ceil_div(s.n, lanes), widest);
    // V's tiles divide its rows where they can: a partial tile runs lane by lane.
    const int64_t e_vecs = ceil_div(s.e, lanes);
    int64_t ev = std::min(e_vecs, widest);
    while (e_vecs % ev != 0) --ev;
    std::vector<int64_t> mrs = mr_choices(s);
    user_check(!mrs.empty()) << "attention: rows of " << s.n
                             << " keys do not fit a block buffer in " << w.str();
    int64_t mr = mrs.front();
    for (int64_t m : mrs)
      if (m * std::max(nr, ev) <= regs) mr = m;
    return Config({{"mr", mr}, {"nr_vecs", nr}, {"ev", ev}, {"parallel", worth_parallel(s.flops()) ? 1 : 0}});
  }

  std::vector<TensorSpec> inputs(const Workload& w) const override {
    AttentionShape s = attention_shape(w);
    std::vector<TensorSpec> in = {
        {"Q", {s.b, s.m, s.d}}, {"Kt", {s.b, s.d, s.n}}, {"V", {s.b, s.n, s.e}}};
    if (s.mask) in.push_back({"Mask", {s.mask_batches, s.mask_rows, s.n}});
    return in;
  }
  TensorSpec output(const Workload& w) const override {
    AttentionShape s = attention_shape(w);
    return {"O", {s.b, s.m, s.e}};
  }

  Values reference(const Workload& w, const std::vector<Values>& in) const override {
    AttentionShape s = attention_shape(w);
    Values o(static_cast<size_t>(s.b * s.m * s.e));
    std::vector<double> p(static_cast<size_t>(s.n));
    for (int64_t b = 0; b < s.b; ++b)
      for (int64_t i = 0; i < s.m; ++i) {
        double mx = -INFINITY, sum = 0;
        for (int64_t j = 0; j < s.n; ++j) {
          double acc = 0;
          for (int64_t k = 0; k < s.d; ++k)
            acc += double(in[0][(b * s.m + i) * s.d + k]) * in[1][(b * s.d + k) * s.n + j];
          if (s.mask)
            acc += in[3][(s.mask_batch(b) * s.mask_rows + (s.mask_rows == 1 ? 0 : i)) * s.n + j];
          p[j] = acc;
          mx = std::max(mx, acc);
        }
        for (double& v : p) sum += (v = std::exp(v - mx));
        for (int64_t e = 0; e < s.e; ++e) {
          double acc = 0;
          for (int64_t j = 0; j < s.n; ++j) acc += p[j] * in[2][(b * s.n + j) * s.e + e];
          o[(b * s.m + i) * s.e + e] = static_cast<float>(acc / sum);
        }
      }
    return o;
  }

 protected:
  ScheduledKernel schedule(const Workload& w, const Target& t, const Config& cfg) const override {
    AttentionShape s = attention_shape(w);
    const DataType f32 = DataType::f32();
    const int64_t lanes = t.lanes(f32), mr = cfg["mr"];
    const int64_t nr = cfg["nr_vecs"] * lanes, er = cfg["ev"] * lanes;
    // Reductions of the block's rows as vector partials (as softmax.rows' fallback).
    const int64_t r = s.n >= 2 * lanes * 4 ? 2 * lanes : (s.n >= lanes ? lanes : 1);

    te::Tensor q = te::placeholder({s.b, s.m, s.d}, w.dtype, "Q");
    te::Tensor kt = te::placeholder({s.b, s.d, s.n}, w.dtype, "Kt");
    te::Tensor v = te::placeholder({s.b, s.n, s.e}, w.dtype, "V");
    ir::IterVar rd = te::reduce_axis(s.d, "d");
    te::Tensor s_acc = te::compute(
        {s.b, s.m, s.n},
        [&](Var b, Var i, Var j) {
          return te::sum(
              ir::make_cast(f32, q(b, i, rd->var)) * ir::make_cast(f32, kt(b, rd->var, j)), {rd});
        },
        "S.acc");
    te::Tensor mask;
    if (s.mask) mask = te::placeholder({s.mask_batches, s.mask_rows, s.n}, w.dtype, "Mask");
    te::Tensor scores = te::compute(
        {s.b, s.m, s.n},
        [&](Var b, Var i, Var j) {
          if (!s.mask) return s_acc(b, i, j);
          Expr mb = b;
          if (s.mask_every > 1) mb = mb / s.mask_every;
          if (s.mask_batches * s.mask_every < s.b) mb = mb % s.mask_batches;
          if (s.mask_batches == 1) mb = Expr(int64_t{0});
          return s_acc(b, i, j) + mask(mb, s.mask_rows == 1 ? Expr(int64_t{0}) : Expr(i), j);
        },
        "S");
    auto read = [](const te::Tensor& x) {
      return [x](const std::vector<Expr>& row, Expr j) { return x(row[0], row[1], j); };
    };
    RowReduce mx = row_reduce({s.b, s.m}, s.n, r, true, read(scores), "S.max");
    te::Tensor p = te::compute(
        {s.b, s.m, s.n},
        [&](Var b, Var i, Var j) {
          return math::exp_nonpositive(scores(b, i, j) - mx.total(b, i));
        },
        "P");
    RowReduce sum = row_reduce({s.b, s.m}, s.n, r, false, read(p), "P.sum");
    ir::IterVar rn = te::reduce_axis(s.n, "n");
    te::Tensor o_acc = te::compute(
        {s.b, s.m, s.e},
        [&](Var b, Var i, Var e) {
          return te::sum(p(b, i, rn->var) * ir::make_cast(f32, v(b, rn->var, e)), {rn});
        },
        "O.acc");
    te::Tensor o = te::compute(
        {s.b, s.m, s.e},
        [&](Var b, Var i, Var e) {
          return ir::make_cast(w.dtype,
                               o_acc(b, i, e) * (ir::make_float(f32, 1.0) / sum.total(b, i)));
        },
        "O");

    te::Schedule sch({o});
    // O: blocks of mr rows; in each, tiles of er columns. (Blocks of two or four such
    // tiles, sharing one pass over V, measured 1.6x slower at 1214 tokens on Zen 3: their
    // buffers leave L1.)
    te::Stage out = sch[o];
    auto [io, ii] = out.split(out.axis(1), mr);
    auto [eo, ei] = out.split(out.axis(2), er);
    auto [ev, el] = out.split(ei, lanes);
    ir::IterVar batch = out.axis(0);
    out.reorder({batch, io, eo, ii, ev, el});
    out.vectorize(el);
    if (cfg["parallel"]) out.parallel(s.b > 1 ? batch : io);
    te::Stage o_tile = sch[o_acc];
    o_tile.compute_at(out, eo);
    schedule_matmul_tile(o_tile, lanes);

    // The block's scores: mr x nr register tiles over D, stored into the stack buffer S.
    te::Stage sc = sch[scores];
    sc.set_scope(ir::MemScope::Local);
    sc.compute_at(out, io);
    auto [no, ni] = sc.split(sc.axis(2), nr);
    auto [nv, nl] = sc.split(ni, lanes);
    sc.reorder({sc.axis(0), no, sc.axis(1), nv, nl});
    sc.vectorize(nl);
    te::Stage s_tile = sch[s_acc];
    s_tile.compute_at(sc, no);
    schedule_matmul_tile(s_tile, lanes);

    // The row max, the probabilities (a second stack buffer) and their sums, per block.
    schedule_row_reduce(sch, mx, &out, io, false);
    te::Stage ps = sch[p];
    ps.set_scope(ir::MemScope::Local);
    ps.compute_at(out, io);
    auto [po, pl] = ps.split(ps.axis(2), lanes);
    ps.vectorize(pl);
    schedule_row_reduce(sch, sum, &out, io, false);

    std::vector<te::Tensor> args = {q, kt, v};
    if (s.mask) args.push_back(mask);
    args.push_back(o);
    return logical_kernel(std::move(sch), args, inputs(w), output(w), s.flops());
  }
};

}  // namespace

const OpTemplate& attention_template() {
  static const Attention t;
  return t;
}

}  // namespace kiln::schedules
