#include "schedules/dense/lowp.h"

#include <algorithm>

#include "compiler/base/error.h"
#include "schedules/epilogue.h"
#include "schedules/f16_partial_sums.h"
#include "schedules/intrinsics.h"
#include "schedules/parallel_rule.h"

namespace kiln::schedules {

using ir::DataType;
using ir::Expr;
using ir::Var;

namespace {

// What the three templates share: the dense workload (logical A[M,K], B[K,N], epilogue
// inputs; the reference of dense.packed), the output type and the C stage.
class LowpDense : public OpTemplate {
 public:
  std::string op() const override { return "dense"; }
  std::vector<std::string> epilogues() const override { return epilogue_names(); }

  // f32 output when asked (param out_f32=1): the accumulator is f32 anyway, and the next
  // layer may want it unrounded.
  static DataType out_type(const Workload& w) {
    return w.param_or("out_f32", 0) != 0 ? DataType::f32() : w.dtype;
  }

  std::vector<TensorSpec> inputs(const Workload& w) const override {
    return dense_packed_template().inputs(w);
  }
  TensorSpec output(const Workload& w) const override { return dense_packed_template().output(w); }
  Values reference(const Workload& w, const std::vector<Values>& in) const override {
    return dense_packed_template().reference(w, in);
  }

 protected:
  // Whether dtype and target fit; check() turns a "no" into a UserError before any codegen
  // (selecting these intrinsics without the feature is an LLVM abort, not an error).
  virtual bool supports(const Workload& w, const Target& t) const = 0;
  virtual const char* needs() const = 0;  // for the error message

  bool applies(const Workload& w, const Target& t) const override {
    return w.op == "dense" && supports(w, t);
  }

  void check(const Workload& w, const Target& t) const override {
    dense_shape(w);
    user_check(supports(w, t)) << name() << ": " << w.str() << " on target " << t.name
                               << " is not supported (needs " << needs() << ")";
  }

  // C = out_type(epilogue(acc)) over the logical [M, N].
  static te::Tensor make_output(const Workload& w, const DenseShape& s, const te::Tensor& acc,
                                const EpilogueTensors& ep) {
    DataType ot = out_type(w);
    return te::compute(
        {s.m, s.n},
        [&](Var i, Var j) {
          return ir::make_cast(ot, apply_epilogue(w, ep, acc(i, j), {i, j}, j));
        },
        "C");
  }

  // Through pair_dot_bf16 (vdpbf16ps, BFDOT): each f32 lane of the accumulator adds
  // a[2l]*b[2l] + a[2l+1]*b[2l+1]. B is packed in the VNNI layout, A broadcasts one pair.
  struct PairDot {
    int64_t mr, nv, lanes, ku;  // tile rows, vectors per row, f32 lanes per vector, K unroll
  };

  ScheduledKernel schedule_pair_dot(const Workload& w, const Config& cfg, const PairDot& p) const {
    const DenseShape s = dense_shape(w);
    const int64_t mr = p.mr, nr = p.nv * p.lanes;
    const int64_t pairs = ceil_div(s.k, 2), panels = ceil_div(s.n, nr);
    const int64_t mp = ceil_div(s.m, mr) * mr, np = panels * nr;
    const DataType f32 = DataType::f32(), bf16 = DataType::bf16();

    te::Tensor a = te::placeholder({s.m, s.k}, bf16, "A");
    te::Tensor b = te::placeholder({panels, pairs, nr * 2}, bf16, "B.vnni");
    EpilogueTensors ep = make_epilogue_placeholders(w, s.n, {s.m, s.n});
    ir::IterVar k2 = te::reduce_axis(pairs, "k2"), kk = te::reduce_axis(2, "kk");
    // The tile covers whole mr x nr blocks: rows past M read row M-1 and are never stored;
    // an odd K's missing last value is zero (and so is the packed B there).
    te::Tensor acc = te::compute(
        {mp, np},
        [&](Var i, Var j) {
          Expr k = k2->var * 2 + kk->var;
          Expr av = ir::make_cast(f32, a(ir::min(i, Expr(s.m - 1)), ir::min(k, Expr(s.k - 1))));
          av = ir::make_select(k < Expr(s.k), av, ir::make_zero(f32));
          Expr bv = ir::make_cast(f32, b(j / nr, k2, (j % nr) * 2 + kk->var));
          return te::sum(av * bv, {k2, kk});
        },
        "C.acc");
    te::Tensor c = make_output(w, s, acc, ep);

    te::Schedule sch({c});
    // The tensorized tile covers all of K: no K blocking, its own k_unroll.
    DenseTiling tiling = dense_tiling(cfg, mr, nr, p.lanes);
    tiling.k_unroll = 1;
    tiling.unroll_tile = true;
    ir::IterVar at = schedule_dense_output(sch, c, tiling);
    // The lanes vectorize the zero-initialisation of the tile, one vector store each.
    schedule_dense_tile(sch, acc, c, at, tiling, {k2, kk});
    sch[acc].tensorize(k2, pair_dot_tile(s, p, pairs));

    auto pack = [s, nr](const Values& v) { return pack_dense_b_vnni(s, nr, v.data()); };
    return finish_dense(*this, w, std::move(sch), a, b, ep, c, pack, panels * pairs * nr * 2);
  }

  // The whole K loop of an mr x (nv*lanes) tile (schedules/intrinsics.h): A's rows past M
  // read row M-1; an odd K ends with A's last value and a zero partner.
  static te::TensorIntrin pair_dot_tile(const DenseShape& s, const PairDot& p, int64_t pairs) {
    PairDotTile tile{p.mr, p.nv, p.lanes, pairs, p.ku, s.k % 2 != 0, "k2", RemainderKind::Loop};
    return pair_dot_bf16_tile(tile, [s, p](const te::TensorizeRegion& r) {
      internal_check(r.inputs.size() == 2 && r.output_base.size() == 2)
          << "pair_dot_tile: unexpected region";
      internal_check(r.inputs[0].first->name == "A" && r.inputs[1].first->name == "B.vnni")
          << "pair_dot_tile: expects A then B.vnni";
      const ir::Buffer a = r.inputs[0].first, b = r.inputs[1].first;
      const Expr row0 = r.output_base[0], col0 = r.output_base[1];
      const Expr panel = col0 / (p.nv * p.lanes);
      const int lanes = static_cast<int>(p.lanes);
      auto row = [row0, s](int64_t i) { return ir::min(row0 + Expr(i), Expr(s.m - 1)); };
      PairDotOperands ops;
      ops.out = r.output;
      // Two adjacent bf16 of A as one i32 (element k in the low half, as VNNI wants).
      ops.a_pair = [a, row](const Expr& k2, int64_t i) {
        return reinterpret(DataType::i32(),
                           ir::make_load(a, {row(i), ir::make_ramp(k2 * 2, 1, 2)}));
      };
      ops.a_last = [a, row, s](int64_t i) {
        Expr last = reinterpret(DataType::u16(), ir::make_load(a, {row(i), Expr(s.k - 1)}));
        return ir::make_cast(DataType::i32(), last);  // zero-extended: partner is +0.0
      };
      ops.b_vector = [b, panel, lanes](const Expr& k2, int64_t v) {
        return ir::make_load(b, {panel, k2, ir::make_ramp(Expr(v * 2 * lanes), 1, 2 * lanes)});
      };
      ops.out_index = [row0, col0, lanes](int64_t i, int64_t v) {
        return std::vector<Expr>{row0 + Expr(i), ir::make_ramp(col0 + Expr(v * lanes), 1, lanes)};
      };
      return ops;
    });
  }
};

// ---------------------------------------------------------------------------------------
// dense.bf16.x86

class DenseBf16X86 final : public LowpDense {
 public:
  std::string name() const override { return "dense.bf16.x86"; }

  ConfigSpace space(const Workload& w, const Target&) const override {
    DenseShape s = dense_shape(w);
    ConfigSpace cs;
    cs.define_knob("mr", row_tile_choices(s.m, {1, 2, 4, 6, 8}));
    cs.define_knob("nr_vecs", {1, 2, 3, 4});  // zmm of 16 f32 accumulators per row
    cs.define_knob("k_unroll", {1, 2, 4});    // K pairs per loop iteration
    cs.define_knob("panels_outer", {0, 1});
    cs.define_knob("parallel", {0, 1, 2});  // serial, outer loop, second loop
    return cs;
  }

  Config fallback(const Workload& w, const Target&) const override {
    DenseShape s = dense_shape(w);
    // 6 x 4 zmm = 24 accumulators + 4 B vectors + a broadcast: 29 of 32 registers.
    int64_t mr = fit_rows(6, s.m, {8, 6, 4, 2, 1}), vecs = 4;
    if (s.n <= 32) vecs = ceil_div(s.n, 16);
    bool parallel = worth_parallel(s.flops());
    return Config({{"mr", mr},
                   {"nr_vecs", vecs},
                   {"k_unroll", 2},
                   {"panels_outer", 1},
                   {"parallel", parallel ? 1 : 0}});
  }

  std::vector<DataType> dtypes() const override { return {DataType::bf16()}; }

 protected:
  // 16 f32 lanes: vdpbf16ps zmm.
  ScheduledKernel schedule(const Workload& w, const Target&,
                           const Config& cfg) const override {
    return schedule_pair_dot(w, cfg, {cfg["mr"], cfg["nr_vecs"], 16, cfg["k_unroll"]});
  }

  bool supports(const Workload& w, const Target& t) const override {
    return w.dtype == DataType::bf16() && t.is_x86() && t.has("avx512bf16") && t.has("avx512f");
  }
  const char* needs() const override { return "dtype bf16 and an x86 target with avx512bf16"; }
};

// ---------------------------------------------------------------------------------------
// dense.bf16.arm

class DenseBf16Arm final : public LowpDense {
 public:
  std::string name() const override { return "dense.bf16.arm"; }

  ConfigSpace space(const Workload& w, const Target&) const override {
    DenseShape s = dense_shape(w);
    ConfigSpace cs;
    std::vector<int64_t> mr2;
    for (int64_t m : {1, 2, 3, 4})
      if (m == 1 || 2 * m <= s.m + 1) mr2.push_back(m);
    cs.define_knob("mr2", mr2);           // row pairs of the tile
    cs.define_knob("nr2", {1, 2, 3, 4});  // column pairs of the tile
    cs.define_knob("k_unroll", {1, 2});   // K blocks per loop iteration
    cs.define_knob("panels_outer", {0, 1});
    cs.define_knob("parallel", {0, 1, 2});  // serial, outer loop, second loop
    // 1: BFDOT instead of BFMMLA: 2*mr2 rows x nr2 vectors of 4 columns, B in the VNNI
    // layout, A broadcasting a pair (the x86 scheme at 128 bits; no repacking of A).
    cs.define_knob("bfdot", {0, 1});
    return cs;
  }

  Config fallback(const Workload& w, const Target&) const override {
    DenseShape s = dense_shape(w);
    // 4 x 4 tiles of 2x2: 16 accumulators + 4 A + 4 B blocks, 24 of the 32 v registers.
    int64_t mr2 = s.m == 1 ? 1 : fit_rows(4, ceil_div(s.m, 2), {4, 3, 2, 1});
    int64_t nr2 = std::min<int64_t>(4, ceil_div(s.n, 2));
    bool parallel = worth_parallel(s.flops());
    return Config({{"mr2", mr2},
                   {"nr2", nr2},
                   {"k_unroll", 1},
                   {"panels_outer", 1},
                   {"parallel", parallel ? 1 : 0},
                   {"bfdot", 0}});
  }

  std::vector<DataType> dtypes() const override { return {DataType::bf16()}; }

 protected:
  ScheduledKernel schedule(const Workload& w, const Target&,
                           const Config& cfg) const override {
    // 4 f32 lanes: BFDOT.
    if (cfg["bfdot"])
      return schedule_pair_dot(w, cfg, {2 * cfg["mr2"], cfg["nr2"], 4, cfg["k_unroll"]});
    const DenseShape s = dense_shape(w);
    const int64_t mr2 = cfg["mr2"], nr2 = cfg["nr2"], mr = 2 * mr2, nr = 2 * nr2;
    const int64_t ku = cfg["k_unroll"];
    const int64_t quads = ceil_div(s.k, 4), panels = ceil_div(s.n, nr);
    const int64_t mp = ceil_div(s.m, mr) * mr, np = panels * nr;
    const DataType f32 = DataType::f32(), bf16 = DataType::bf16();

    te::Tensor a = te::placeholder({s.m, s.k}, bf16, "A");
    te::Tensor b = te::placeholder({panels, quads, nr2 * 8}, bf16, "B.bfmmla");
    EpilogueTensors ep = make_epilogue_placeholders(w, s.n, {s.m, s.n});
    // A (an activation, so not packed ahead of time) is repacked by the kernel into 2-row
    // interleaved K=4 blocks, zero past M and K: one 128-bit load per BFMMLA operand. It is
    // O(M*K) work before O(M*N*K).
    te::Tensor ap = te::compute(
        {mp / 2, quads, 8},
        [&](Var m2, Var q, Var e) {
          Expr row = m2 * 2 + e / 4, k = q * 4 + e % 4;
          Expr v = a(ir::min(row, Expr(s.m - 1)), ir::min(k, Expr(s.k - 1)));
          return ir::make_select(row < Expr(s.m) && k < Expr(s.k), v, ir::make_zero(bf16));
        },
        "A.bfmmla");
    ir::IterVar kq = te::reduce_axis(quads, "kq"), kc = te::reduce_axis(4, "kc");
    te::Tensor acc = te::compute(
        {mp, np},
        [&](Var i, Var j) {
          Expr av = ir::make_cast(f32, ap(i / 2, kq, (i % 2) * 4 + kc->var));
          Expr bv = ir::make_cast(f32, b(j / nr, kq, ((j % nr) / 2) * 8 + (j % 2) * 4 + kc->var));
          return te::sum(av * bv, {kq, kc});
        },
        "C.acc");
    te::Tensor c = make_output(w, s, acc, ep);

    te::Schedule sch({c});
    te::Stage pack = sch[ap];
    pack.vectorize(pack.axis(2));
    DenseTiling tiling = dense_tiling(cfg, mr, nr, 2);
    tiling.k_unroll = 1;  // the tensorized tile unrolls its own K blocks
    tiling.unroll_tile = true;
    ir::IterVar at = schedule_dense_output(sch, c, tiling);
    schedule_dense_tile(sch, acc, c, at, tiling, {kq, kc});
    sch[acc].tensorize(kq, bfmmla_tile(mr2, nr2, ku, quads));

    auto pack_b = [s, nr](const Values& v) { return pack_dense_b_bfmmla(s, nr, v.data()); };
    return finish_dense(*this, w, std::move(sch), a, b, ep, c, pack_b, panels * quads * nr2 * 8);
  }

  bool supports(const Workload& w, const Target& t) const override {
    return w.dtype == DataType::bf16() && t.is_aarch64() && t.has("bf16");
  }
  const char* needs() const override { return "dtype bf16 and an AArch64 target with +bf16"; }

 private:
  // The whole K loop of a (2*mr2) x (2*nr2) tile (schedules/intrinsics.h): per K block of
  // 4, mr2 A blocks (2-row interleaved) and nr2 B blocks (2-column interleaved) into 2x2
  // tiles, added into the row-major accumulator at the end.
  static te::TensorIntrin bfmmla_tile(int64_t mr2, int64_t nr2, int64_t ku, int64_t quads) {
    return mmla_bf16_tile({mr2, nr2, quads, ku, "kq"}, [nr2](const te::TensorizeRegion& r) {
      internal_check(r.inputs.size() == 2 && r.output_base.size() == 2)
          << "bfmmla_tile: unexpected region";
      internal_check(r.inputs[0].first->name == "A.bfmmla" && r.inputs[1].first->name == "B.bfmmla")
          << "bfmmla_tile: expects A.bfmmla then B.bfmmla";
      const ir::Buffer a = r.inputs[0].first, b = r.inputs[1].first;
      const Expr row0 = r.output_base[0], col0 = r.output_base[1];
      const Expr pair0 = row0 / 2, panel = col0 / (2 * nr2);
      MmlaOperands ops;
      ops.out = r.output;
      ops.a_block = [a, pair0](const Expr& kq, int64_t p) {
        return ir::make_load(a, {pair0 + Expr(p), kq, ir::make_ramp(Expr(0), 1, 8)});
      };
      ops.b_block = [b, panel](const Expr& kq, int64_t q) {
        return ir::make_load(b, {panel, kq, ir::make_ramp(Expr(q * 8), 1, 8)});
      };
      ops.out_index = [row0, col0](int64_t row, int64_t q) {
        return std::vector<Expr>{row0 + Expr(row), ir::make_ramp(col0 + Expr(2 * q), 1, 2)};
      };
      return ops;
    });
  }
};

// ---------------------------------------------------------------------------------------
// dense.f16.arm

class DenseF16Arm final : public LowpDense {
 public:
  std::string name() const override { return "dense.f16.arm"; }

  ConfigSpace space(const Workload& w, const Target&) const override {
    DenseShape s = dense_shape(w);
    ConfigSpace cs;
    cs.define_knob("mr", row_tile_choices(s.m, {1, 2, 4, 6, 8}));
    cs.define_knob("nr_vecs", {1, 2, 3});  // vectors of 8 halves per row
    cs.define_knob("k_unroll", {1, 2, 4});
    // 0: f32 accumulation; 1: all of K in f16 (`fmla .8h`, loosest); 2: f16 within blocks
    // of kb, f32 across them (f16_partial_sums.h).
    cs.define_knob("f16_acc", {0, 1, 2});
    cs.define_knob("kb", kb_choices(s.k));
    define_dense_loop_knobs(cs, s);
    return cs;
  }

  Config fallback(const Workload& w, const Target&) const override {
    DenseShape s = dense_shape(w);
    // f16 blocks: per 8 columns one f16 accumulator and two f32 (.4s) partial sums, so a
    // tile of 4 rows x 2 vectors holds 24 of the 32 v registers.
    int64_t mr = fit_rows(4, s.m, {8, 6, 4, 2, 1});
    int64_t vecs = s.n <= 8 ? 1 : 2;
    bool parallel = worth_parallel(s.flops());
    return Config({{"mr", mr},
                   {"nr_vecs", vecs},
                   {"k_unroll", 1},
                   {"f16_acc", static_cast<int64_t>(F16AccKind::F16Blocks)},
                   {"kb", fallback_kb(s.k)},
                   {"panels_outer", 1},
                   {"parallel", parallel ? 1 : 0},
                   {"kc", 0},
                   {"mc_tiles", 1}});
  }

  std::vector<DataType> dtypes() const override { return {DataType::f16()}; }

 protected:
  ScheduledKernel schedule(const Workload& w, const Target&,
                           const Config& cfg) const override {
    if (f16_acc_kind(cfg["f16_acc"]) == F16AccKind::F16Blocks) return schedule_blocks(w, cfg);
    const DenseShape s = dense_shape(w);
    const int64_t lanes = 8, nr = cfg["nr_vecs"] * lanes, mr = cfg["mr"];
    const int64_t panels = ceil_div(s.n, nr);
    const DataType f16 = DataType::f16();
    const bool f16_acc = f16_acc_kind(cfg["f16_acc"]) == F16AccKind::F16;
    const DataType acc_t = f16_acc ? f16 : DataType::f32();

    te::Tensor a = te::placeholder({s.m, s.k}, f16, "A");
    te::Tensor b = te::placeholder({panels, s.k, nr}, f16, "B.packed");
    EpilogueTensors ep = make_epilogue_placeholders(w, s.n, {s.m, s.n});
    ir::IterVar k = te::reduce_axis(s.k, "k");
    te::Tensor acc = te::compute(
        {s.m, s.n},
        [&](Var i, Var j) {
          return te::sum(ir::make_cast(acc_t, a(i, k)) * ir::make_cast(acc_t, b(j / nr, k, j % nr)),
                         {k});
        },
        "C.acc");
    te::Tensor acc32 =
        f16_acc ? te::compute(
                      {s.m, s.n},
                      [&](Var i, Var j) { return ir::make_cast(DataType::f32(), acc(i, j)); },
                      "C.acc32")
                : acc;
    te::Tensor c = make_output(w, s, acc32, ep);

    te::Schedule sch({c});
    if (f16_acc) sch[acc32].compute_inline();
    DenseTiling tiling = dense_tiling(cfg, mr, nr, lanes);
    tiling.unroll_tile = true;
    ir::IterVar at = schedule_dense_output(sch, c, tiling);
    schedule_dense_tile(sch, acc, c, at, tiling, {sch[acc].reduce_axis(0)});

    auto pack = [s, nr](const Values& v) { return pack_dense_b(s, nr, v.data()); };
    return finish_dense(*this, w, std::move(sch), a, b, ep, c, pack, panels * s.k * nr);
  }

  bool supports(const Workload& w, const Target& t) const override {
    return w.dtype == DataType::f16() && t.is_aarch64() && t.has("fullfp16");
  }
  const char* needs() const override { return "dtype f16 and an AArch64 target with +fullfp16"; }

 private:
  // Block sizes below K (one block of 16 when K is smaller): longer blocks run longer in
  // f16 between the f32 additions and lose more accuracy.
  static std::vector<int64_t> kb_choices(int64_t k) {
    std::vector<int64_t> out;
    for (int64_t kb : {16, 32, 64, 128})
      if (kb < k || out.empty()) out.push_back(kb);
    return out;
  }
  // 32: the ResNet-18 error table (tests/kernels/f16_accuracy_test.cpp) keeps it within
  // f16's 1e-2 on K = 4608, where all-f16 accumulation is not.
  static int64_t fallback_kb(int64_t k) {
    std::vector<int64_t> c = kb_choices(k);
    return std::find(c.begin(), c.end(), 32) != c.end() ? 32 : c.back();
  }

  // f16_acc = 2: an mr x nr tile of f16 accumulators per K block of kb (`fmla .8h`), added
  // into f32 accumulators after each block. B is packed with K padded to whole blocks
  // (zeros), so A's values past K (read at K-1) add nothing.
  ScheduledKernel schedule_blocks(const Workload& w, const Config& cfg) const {
    const DenseShape s = dense_shape(w);
    const int64_t lanes = 8, nr = cfg["nr_vecs"] * lanes, mr = cfg["mr"], kb = cfg["kb"];
    const int64_t panels = ceil_div(s.n, nr), blocks = ceil_div(s.k, kb), kp = blocks * kb;
    const DataType f16 = DataType::f16();

    te::Tensor a = te::placeholder({s.m, s.k}, f16, "A");
    te::Tensor b = te::placeholder({panels, kp, nr}, f16, "B.packed");
    EpilogueTensors ep = make_epilogue_placeholders(w, s.n, {s.m, s.n});
    F16PartialSums ps = f16_partial_sums(
        {s.m, s.n}, {blocks, kb}, {"kq", "kk"}, 1,
        [&](const std::vector<Expr>& ij, const std::vector<Expr>& r) {
          Expr k = r[0] * kb + r[1];
          Expr ak = kp == s.k ? k : ir::min(k, Expr(s.k - 1));
          return a(ij[0], ak) * b(ij[1] / nr, k, ij[1] % nr);
        },
        "C.acc");
    te::Tensor c = make_output(w, s, ps.acc, ep);

    te::Schedule sch({c});
    DenseTiling tiling = dense_tiling(cfg, mr, nr, lanes);
    tiling.unroll_tile = true;
    tiling.k_unroll = 1;  // the f16 block loop unrolls instead
    if (tiling.kc > 0) tiling.kc = std::max<int64_t>(1, tiling.kc / kb);  // in blocks
    ir::IterVar at = schedule_dense_output(sch, c, tiling);
    schedule_dense_tile(sch, ps.acc, c, at, tiling, ps.outer);
    schedule_f16_partial_sums(sch, ps, lanes, cfg["k_unroll"]);

    auto pack = [s, nr, kp](const Values& v) {
      Values padded(static_cast<size_t>(kp * s.n), 0.0f);
      std::copy(v.begin(), v.begin() + s.k * s.n, padded.begin());
      return pack_dense_b({s.m, s.n, kp}, nr, padded.data());
    };
    return finish_dense(*this, w, std::move(sch), a, b, ep, c, pack, panels * kp * nr);
  }
};

}  // namespace

const OpTemplate& dense_bf16_x86_template() {
  static const DenseBf16X86 t;
  return t;
}
const OpTemplate& dense_bf16_arm_template() {
  static const DenseBf16Arm t;
  return t;
}
const OpTemplate& dense_f16_arm_template() {
  static const DenseF16Arm t;
  return t;
}

std::vector<float> pack_dense_b_vnni(const DenseShape& s, int64_t nr, const float* b,
                                     int64_t pairs) {
  const int64_t panels = ceil_div(s.n, nr);
  if (pairs == 0) pairs = ceil_div(s.k, 2);
  internal_check(2 * pairs >= s.k) << "pack_dense_b_vnni: " << pairs << " pairs for K=" << s.k;
  std::vector<float> packed(static_cast<size_t>(panels * pairs * nr * 2), 0.0f);
  for (int64_t p = 0; p < panels; ++p)
    for (int64_t k = 0; k < s.k; ++k)
      for (int64_t j = 0; j < nr && p * nr + j < s.n; ++j)
        packed[((p * pairs + k / 2) * nr + j) * 2 + k % 2] = b[k * s.n + p * nr + j];
  return packed;
}

std::vector<float> pack_dense_b_bfmmla(const DenseShape& s, int64_t nr, const float* b) {
  const int64_t panels = ceil_div(s.n, nr), quads = ceil_div(s.k, 4);
  std::vector<float> packed(static_cast<size_t>(panels * quads * nr * 4), 0.0f);
  for (int64_t p = 0; p < panels; ++p)
    for (int64_t k = 0; k < s.k; ++k)
      for (int64_t j = 0; j < nr && p * nr + j < s.n; ++j)
        packed[((p * quads + k / 4) * (nr / 2) + j / 2) * 8 + (j % 2) * 4 + k % 4] =
            b[k * s.n + p * nr + j];
  return packed;
}

}  // namespace kiln::schedules
