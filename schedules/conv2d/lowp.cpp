#include "schedules/conv2d/lowp.h"

#include <algorithm>

#include "compiler/base/error.h"
#include "schedules/conv2d/blocked.h"
#include "schedules/epilogue.h"
#include "schedules/f16_partial_sums.h"
#include "schedules/intrinsics.h"
#include "schedules/parallel_rule.h"

namespace kiln::schedules {

using ir::DataType;
using ir::Expr;
using ir::IterVar;
using ir::Var;

namespace {

// Widest register tile (output pixels) the low-precision spaces offer.
constexpr int64_t kWidestTile = 14;

// Base of the two templates: the logical interface and reference of every conv2d template, the
// output type, and the lowering with packed arguments.
class LowpConv2d : public Conv2dTemplate {
 public:
  bool applies(const Workload& w, const Target& t) const override {
    return w.op == "conv2d" && supports(w, t) && conv2d_params(w).groups == 1;
  }

 protected:
  virtual bool supports(const Workload& w, const Target& t) const = 0;
  virtual const char* needs() const = 0;

  // f32 output when asked (param out_f32=1): the accumulator is f32 anyway.
  static DataType out_type(const Workload& w) {
    return w.param_or("out_f32", 0) != 0 ? DataType::f32() : w.dtype;
  }

  // Rejects a target without the instructions before any codegen: selecting them anyway is
  // an LLVM abort, not an error.
  void check(const Workload& w, const Target& t) const override {
    Conv2dParams p = conv2d_params(w);
    user_check(supports(w, t)) << name() << ": " << w.str() << " on target " << t.name
                               << " is not supported (needs " << needs() << ")";
    user_check(p.groups == 1) << name() << ": groups must be 1, got " << p.groups
                              << " (use conv2d.nchwc or conv2d.depthwise)";
  }

  // out[n, b, y, x, c] = out_type(epilogue(acc)) over the blocked output.
  static te::Tensor blocked_output(const Workload& w, const Conv2dParams& p,
                                   const EpilogueTensors& ep, const te::Tensor& acc, int64_t ob,
                                   int64_t ocb) {
    const DataType ot = out_type(w);
    return te::compute(
        {p.n, ob, p.out_h(), p.out_w(), ocb},
        [&](const std::vector<Var>& v) -> Expr {
          std::vector<Expr> idx(v.begin(), v.end());
          Expr channel = v[1] * ocb + v[4];
          return ir::make_cast(ot, apply_epilogue(w, ep, acc(idx), idx, channel));
        },
        "conv");
  }

  // The shared register tile (blocked.h) with this config's tile and loop knobs;
  // channel-pair unrolling, where there is any, is the tensorized tile's own.
  static void schedule_tile(te::Schedule& sch, const te::Tensor& out, const te::Tensor& acc,
                            const Config& cfg, int64_t lanes, const std::vector<IterVar>& reduce,
                            const IterVar& kw_axis) {
    TileKnobs k{cfg["reg_n"], lanes, cfg["parallel"], cfg["oc_inner"], cfg["unroll_kw"] != 0,
                false, 1, {}, kw_axis};
    schedule_register_tile(sch, out, acc, k, reduce);
  }

  // The kernel (data, weight, the epilogue's tensors, out), its arguments logical outside
  // (blocked_conv_args).
  ScheduledKernel finish(const Workload& w, const Conv2dParams& p, te::Schedule sch,
                         const te::Tensor& data, const te::Tensor& weight,
                         const EpilogueTensors& ep, const te::Tensor& out, int64_t icb, int64_t ocb,
                         std::function<Values(const Values&)> pack_w,
                         int64_t weight_elements) const {
    return {
        std::move(sch), with_epilogue_args({data, weight}, ep, out),
        blocked_conv_args(inputs(w), output(w), p, icb, ocb, std::move(pack_w), weight_elements),
        p.flops()};
  }
};

// ---------------------------------------------------------------------------------------
// bf16 through a pairwise dot instruction (vdpbf16ps, BFDOT): each f32 lane of the
// accumulator adds a[2l]*b[2l] + a[2l+1]*b[2l+1]. conv2d.bf16.x86 and conv2d.bf16.arm differ
// only in the vector width (which picks the instruction), the target check and the fallback.

class Conv2dBf16Pair : public LowpConv2d {
 public:
  ConfigSpace space(const Workload& w, const Target&) const override {
    Conv2dParams p = conv2d_params(w);
    ConfigSpace cs;
    cs.define_knob("ic_bn", ic_bn_choices(p.c, true));
    cs.define_knob("oc_bn", oc_bn_choices(p.o, lanes()));
    cs.define_knob("reg_n", reg_n_choices(p.out_w(), kWidestTile));
    cs.define_knob("unroll_kw", {0, 1});
    cs.define_knob("k_unroll", {1, 2, 4});  // channel pairs per iteration of the pair loop
    define_tile_loop_knobs(cs);
    return cs;
  }

  // A register tile of up to `max_vecs` vectors of output channels x pixels, with at most
  // `accumulators` of the 32 registers (the rest hold weight vectors and broadcast pairs).
  Config pair_fallback(const Workload& w, int64_t max_vecs, int64_t ic_cap,
                       int64_t accumulators = 24) const {
    Conv2dParams p = conv2d_params(w);
    const int64_t lanes = this->lanes();
    // The widest block of the space's choices within max_vecs: a block of 3 vectors (what
    // 9 to 12 channels would round to on NEON) is not one of them.
    int64_t vecs = 1;
    for (int64_t oc_bn : oc_bn_choices(p.o, lanes))
      if (oc_bn / lanes <= max_vecs) vecs = std::max(vecs, oc_bn / lanes);
    int64_t reg_n = pick_reg_n(p.out_w(), accumulators / vecs, kWidestTile);
    int64_t icb = pick_ic_bn(p.c, ic_cap, true);
    return Config({{"ic_bn", icb},
                   {"oc_bn", lanes * vecs},
                   {"reg_n", reg_n},
                   {"unroll_kw", p.kw <= 3 ? 1 : 0},
                   {"k_unroll", icb >= 8 ? 4 : (icb >= 4 ? 2 : 1)},
                   {"oc_inner", 0},
                   {"parallel", worth_parallel(p.flops()) ? 1 : 0}});
  }

  std::vector<DataType> dtypes() const override { return {DataType::bf16()}; }

 protected:
  ScheduledKernel schedule(const Workload& w, const Target&,
                           const Config& cfg) const override {
    const Conv2dParams p = conv2d_params(w);
    const DataType f32 = DataType::f32(), bf16 = DataType::bf16();
    const int64_t icb = cfg["ic_bn"], ocb = cfg["oc_bn"], reg_n = cfg["reg_n"];
    const int64_t cb = ceil_div(p.c, icb), ob = ceil_div(p.o, ocb), pairs = icb / 2;
    const int64_t oh = p.out_h(), ow = p.out_w(), owp = ceil_div(ow, reg_n) * reg_n;

    te::Tensor data = te::placeholder({p.n, cb, p.h, p.w, icb}, bf16, "data");
    te::Tensor weight = te::placeholder({ob, cb, p.kh, p.kw, pairs, ocb * 2}, bf16, "weight.vnni");
    te::Tensor padded = pad_blocked(data, p, bf16);
    EpilogueTensors ep = make_epilogue_placeholders(w, ob * ocb, {p.n, ob, oh, ow, ocb});
    const PairConvSums sums = pair_conv_sums(p, padded, weight, ob, ocb, owp, f32);
    te::Tensor out = blocked_output(w, p, ep, sums.acc, ob, ocb);

    te::Schedule sch({out});
    if (!(padded == data)) schedule_copy_stage(sch, padded, cfg["parallel"] != 0);
    schedule_tile(sch, out, sums.acc, cfg, lanes(), sums.reduce, sums.reduce[2]);
    sch[sums.acc].tensorize(
        sums.reduce[3], pair_dot_tile(p, reg_n, ocb / lanes(), lanes(), pairs, cfg["k_unroll"], ow));

    return finish(
        w, p, std::move(sch), data, weight, ep, out, icb, ocb,
        [p, icb, ocb](const Values& v) { return pack_conv_weight_vnni(v, p, icb, ocb); },
        ob * cb * p.kh * p.kw * pairs * ocb * 2);
  }

  // f32 lanes per accumulator vector; pair_dot_bf16 picks the instruction by it.
  virtual int64_t lanes() const = 0;

 private:
  static te::TensorIntrin pair_dot_tile(const Conv2dParams& p, int64_t reg_n, int64_t nv,
                                        int64_t lanes, int64_t pairs, int64_t ku, int64_t ow) {
    PairDotFn dot = [](Expr acc, Expr a, Expr b) {
      return pair_dot_bf16(std::move(acc), std::move(a), std::move(b));
    };
    return conv_pair_dot_tile(p, reg_n, nv, lanes, pairs, ku, ow, DataType::bf16(), dot);
  }
};

// ---------------------------------------------------------------------------------------
// conv2d.bf16.x86

class Conv2dBf16X86 final : public Conv2dBf16Pair {
 public:
  std::string name() const override { return "conv2d.bf16.x86"; }

  Config fallback(const Workload& w, const Target&) const override {
    // 2 zmm of output channels x up to 12 pixels: 24 accumulators + 2 weight vectors + the
    // broadcast pair, of 32 registers.
    int64_t vecs = std::min<int64_t>(2, ceil_div(conv2d_params(w).o, 16));
    return pair_fallback(w, 2, 16 * vecs);
  }

 protected:
  bool supports(const Workload& w, const Target& t) const override {
    return w.dtype == DataType::bf16() && t.is_x86() && t.has("avx512bf16") && t.has("avx512f");
  }
  const char* needs() const override { return "dtype bf16 and an x86 target with avx512bf16"; }
  int64_t lanes() const override { return 16; }  // vdpbf16ps zmm
};

// ---------------------------------------------------------------------------------------
// conv2d.bf16.arm

class Conv2dBf16Arm final : public Conv2dBf16Pair {
 public:
  std::string name() const override { return "conv2d.bf16.arm"; }

  Config fallback(const Workload& w, const Target&) const override {
    // 4 q registers of output channels (16) x up to 5 pixels: 20 accumulators, and room for
    // the weight vectors of 4 channel pairs unrolled (k_unroll) and the broadcasts. With 6
    // pixels (24) that spilled on a Neoverse-V1: 58% of its BFDOT peak by `kiln inspect
    // --analyze` on a 256-channel 14x14 conv, 76% with 5.
    return pair_fallback(w, 4, 16, 20);
  }

 protected:
  bool supports(const Workload& w, const Target& t) const override {
    return w.dtype == DataType::bf16() && t.is_aarch64() && t.has("bf16");
  }
  const char* needs() const override { return "dtype bf16 and an AArch64 target with +bf16"; }
  int64_t lanes() const override { return 4; }  // BFDOT
};

// ---------------------------------------------------------------------------------------
// conv2d.f16.arm

class Conv2dF16Arm final : public LowpConv2d {
 public:
  std::string name() const override { return "conv2d.f16.arm"; }

  ConfigSpace space(const Workload& w, const Target&) const override {
    Conv2dParams p = conv2d_params(w);
    ConfigSpace cs;
    cs.define_knob("ic_bn", ic_bn_choices(p.c, false));
    cs.define_knob("oc_bn", oc_bn_choices(p.o, 8));
    cs.define_knob("reg_n", reg_n_choices(p.out_w(), kWidestTile));
    cs.define_knob("unroll_kw", {0, 1});
    // 0: f32 accumulation; 1: all of the reduction in f16 (`fmla .8h`, loosest); 2: f16
    // within blocks of f16_block reduction axes, f32 across them (f16_partial_sums.h).
    cs.define_knob("f16_acc", {0, 1, 2});
    cs.define_knob("f16_block", f16_block_choices(p));
    define_tile_loop_knobs(cs);
    return cs;
  }

  Config fallback(const Workload& w, const Target&) const override {
    Conv2dParams p = conv2d_params(w);
    // f16 blocks: per 8 channels one f16 accumulator and two f32 (.4s) partial sums; 2
    // vectors of 8 channels x 4 pixels hold 24 of the 32 v registers. The 4 pixels even where
    // they leave a remainder (14 = 3 x 4 + 2): each FMLA waits on its accumulator's last one,
    // and 2 x 2 (the widest tile dividing 14) leaves a Neoverse-N1's two 4-cycle FMLA pipes
    // half idle: 49% of their peak by `kiln inspect --analyze`, 63% with 2 x 4.
    int64_t vecs = std::min<int64_t>(2, ceil_div(p.o, 8));
    int64_t reg_n = 1;
    for (int64_t r : reg_n_choices(p.out_w(), kWidestTile))
      if (r <= 8 / vecs) reg_n = std::max(reg_n, r);
    int64_t icb = pick_ic_bn(p.c, 8 * vecs, false);
    return Config({{"ic_bn", icb},
                   {"oc_bn", 8 * vecs},
                   {"reg_n", reg_n},
                   {"unroll_kw", p.kw <= 3 ? 1 : 0},
                   {"f16_acc", static_cast<int64_t>(F16AccKind::F16Blocks)},
                   {"f16_block", fallback_f16_block(p, icb)},
                   {"oc_inner", 0},
                   {"parallel", worth_parallel(p.flops()) ? 1 : 0}});
  }

  std::vector<DataType> dtypes() const override { return {DataType::f16()}; }

 protected:
  ScheduledKernel schedule(const Workload& w, const Target&,
                           const Config& cfg) const override {
    if (f16_acc_kind(cfg["f16_acc"]) == F16AccKind::F16Blocks) return schedule_blocks(w, cfg);
    const Conv2dParams p = conv2d_params(w);
    const DataType acc_t = cfg["f16_acc"] ? DataType::f16() : DataType::f32();
    const int64_t icb = cfg["ic_bn"], ocb = cfg["oc_bn"];
    const int64_t cb = ceil_div(p.c, icb), ob = ceil_div(p.o, ocb);
    const int64_t oh = p.out_h(), ow = p.out_w();
    const auto [data, weight, padded, ep] = f16_conv_inputs(w, p, icb, ocb);
    IterVar rco = te::reduce_axis(cb, "rco"), ry = te::reduce_axis(p.kh, "ry");
    IterVar rx = te::reduce_axis(p.kw, "rx"), rci = te::reduce_axis(icb, "rci");
    te::Tensor acc = te::compute(
        {p.n, ob, oh, ow, ocb},
        [&](const std::vector<Var>& v) -> Expr {
          Expr in =
              padded(v[0], rco, v[2] * p.sh + ry->var * p.dh, v[3] * p.sw + rx->var * p.dw, rci);
          Expr wt = weight(v[1], rco, ry, rx, rci, v[4]);
          return te::sum(ir::make_cast(acc_t, in) * ir::make_cast(acc_t, wt), {rco, ry, rx, rci});
        },
        "conv.acc");
    te::Tensor acc32 = acc;
    if (cfg["f16_acc"])
      acc32 = te::compute(
          {p.n, ob, oh, ow, ocb},
          [&](const std::vector<Var>& v) -> Expr {
            return ir::make_cast(DataType::f32(), acc(std::vector<Expr>(v.begin(), v.end())));
          },
          "conv.acc32");
    te::Tensor out = blocked_output(w, p, ep, acc32, ob, ocb);

    te::Schedule sch({out});
    if (cfg["f16_acc"]) sch[acc32].compute_inline();
    if (!(padded == data)) schedule_copy_stage(sch, padded, cfg["parallel"] != 0);
    schedule_tile(sch, out, acc, cfg, 8, {rco, ry, rx, rci}, rx);

    return finish(
        w, p, std::move(sch), data, weight, ep, out, icb, ocb,
        [p, icb, ocb](const Values& v) { return pack_blocked_weight(v, p, icb, ocb); },
        ob * cb * p.kh * p.kw * icb * ocb);
  }

 protected:
  bool supports(const Workload& w, const Target& t) const override {
    return w.dtype == DataType::f16() && t.is_aarch64() && t.has("fullfp16");
  }
  const char* needs() const override { return "dtype f16 and an AArch64 target with +fullfp16"; }

 private:
  // The kernel's inputs in both accumulation schemes: blocked f16 data and packed weights,
  // the zero-padded data, the epilogue's tensors over the blocked output.
  struct F16ConvInputs {
    te::Tensor data, weight, padded;
    EpilogueTensors ep;
  };
  static F16ConvInputs f16_conv_inputs(const Workload& w, const Conv2dParams& p, int64_t icb,
                                       int64_t ocb) {
    const DataType f16 = DataType::f16();
    const int64_t cb = ceil_div(p.c, icb), ob = ceil_div(p.o, ocb);
    te::Tensor data = te::placeholder({p.n, cb, p.h, p.w, icb}, f16, "data");
    te::Tensor weight = te::placeholder({ob, cb, p.kh, p.kw, icb, ocb}, f16, "weight.packed");
    return {data, weight, pad_blocked(data, p, f16),
            make_epilogue_placeholders(w, ob * ocb, {p.n, ob, p.out_h(), p.out_w(), ocb})};
  }

  // How many of the innermost reduction axes (channels of a block, kernel columns, kernel
  // rows) sum in f16 before the f32 addition: only those that make the block longer.
  static std::vector<int64_t> f16_block_choices(const Conv2dParams& p) {
    std::vector<int64_t> out = {1};
    if (p.kw > 1) out.push_back(2);
    if (p.kh > 1) out.push_back(3);
    return out;
  }
  // The f16 block's length in products for f16_block = `level`.
  static int64_t f16_block_length(const Conv2dParams& p, int64_t icb, int64_t level) {
    return icb * (level >= 2 ? p.kw : 1) * (level >= 3 ? p.kh : 1);
  }
  // The longest block of at most 64 products (the error table in
  // tests/kernels/f16_accuracy_test.cpp): one kernel row of 16 channels for a 3x3 conv.
  static int64_t fallback_f16_block(const Conv2dParams& p, int64_t icb) {
    int64_t best = 1;
    for (int64_t level : f16_block_choices(p))
      if (f16_block_length(p, icb, level) <= 64) best = level;
    return best;
  }

  // f16_acc = 2: the register tile's f16 accumulators sum one block (the innermost
  // f16_block reduction axes, `fmla .8h`), then widen into the tile's f32 accumulators.
  ScheduledKernel schedule_blocks(const Workload& w, const Config& cfg) const {
    const Conv2dParams p = conv2d_params(w);
    const int64_t icb = cfg["ic_bn"], ocb = cfg["oc_bn"], level = cfg["f16_block"];
    const int64_t cb = ceil_div(p.c, icb), ob = ceil_div(p.o, ocb);
    const int64_t oh = p.out_h(), ow = p.out_w();
    const auto [data, weight, padded, ep] = f16_conv_inputs(w, p, icb, ocb);
    F16PartialSums ps = f16_partial_sums(
        {p.n, ob, oh, ow, ocb}, {cb, p.kh, p.kw, icb}, {"rco", "ry", "rx", "rci"},
        static_cast<size_t>(level),
        [&](const std::vector<Expr>& v, const std::vector<Expr>& r) {
          Expr in = padded(v[0], r[0], v[2] * p.sh + r[1] * p.dh, v[3] * p.sw + r[2] * p.dw, r[3]);
          return in * weight(v[1], r[0], r[1], r[2], r[3], v[4]);
        },
        "conv.acc");
    te::Tensor out = blocked_output(w, p, ep, ps.acc, ob, ocb);

    te::Schedule sch({out});
    if (!(padded == data)) schedule_copy_stage(sch, padded, cfg["parallel"] != 0);
    // rx is the last outer axis (f16_block 1) or one of the block's (2, 3).
    const bool rx_outer = level == 1;
    schedule_tile(sch, out, ps.acc, cfg, 8, ps.outer, rx_outer ? ps.outer.back() : IterVar());
    std::vector<IterVar> unroll;
    if (!rx_outer && cfg["unroll_kw"]) unroll.push_back(ps.inner[ps.inner.size() - 2]);
    // Channels unrolled by 8 (or 4): one pixel's values are neighbours, taken as lanes of one
    // load (codegen/lane_broadcasts.h) rather than one `ld1r` each.
    schedule_f16_partial_sums(sch, ps, 8, icb % 8 == 0 ? 8 : icb % 4 == 0 ? 4 : 1, unroll);

    return finish(
        w, p, std::move(sch), data, weight, ep, out, icb, ocb,
        [p, icb, ocb](const Values& v) { return pack_blocked_weight(v, p, icb, ocb); },
        ob * cb * p.kh * p.kw * icb * ocb);
  }

  // OIHW -> [O/ocb, C/icb, KH, KW, icb, ocb], zero-padded (groups 1).
  static Values pack_blocked_weight(const Values& wv, const Conv2dParams& p, int64_t icb,
                                    int64_t ocb) {
    const int64_t cb = ceil_div(p.c, icb), ob = ceil_div(p.o, ocb);
    Values out(static_cast<size_t>(ob * cb * p.kh * p.kw * icb * ocb), 0.0f);
    for (int64_t o = 0; o < p.o; ++o)
      for (int64_t c = 0; c < p.c; ++c)
        for (int64_t ky = 0; ky < p.kh; ++ky)
          for (int64_t kx = 0; kx < p.kw; ++kx)
            out[(((((o / ocb) * cb + c / icb) * p.kh + ky) * p.kw + kx) * icb + c % icb) * ocb +
                o % ocb] = wv[((o * p.c + c) * p.kh + ky) * p.kw + kx];
    return out;
  }
};

}  // namespace

PairConvSums pair_conv_sums(const Conv2dParams& p, const te::Tensor& padded,
                            const te::Tensor& weight, int64_t ob, int64_t ocb, int64_t owp,
                            DataType acc_type) {
  const int64_t cb = *ir::as_const_int(padded.shape()[1]);
  const int64_t pairs = *ir::as_const_int(weight.shape()[4]), ow = p.out_w();
  IterVar rco = te::reduce_axis(cb, "rco"), ry = te::reduce_axis(p.kh, "ry");
  IterVar rx = te::reduce_axis(p.kw, "rx"), rp = te::reduce_axis(pairs, "rp");
  IterVar rk = te::reduce_axis(2, "rk");
  // Whole reg_n tiles: pixels past OW read pixel OW-1 and are never stored.
  te::Tensor acc = te::compute(
      {p.n, ob, p.out_h(), owp, ocb},
      [&](const std::vector<Var>& v) -> Expr {
        Expr x = ir::min(v[3], Expr(ow - 1));
        Expr in = padded(v[0], rco, v[2] * p.sh + ry->var * p.dh, x * p.sw + rx->var * p.dw,
                         rp->var * 2 + rk->var);
        Expr wt = weight(v[1], rco, ry, rx, rp, v[4] * 2 + rk->var);
        return te::sum(ir::make_cast(acc_type, in) * ir::make_cast(acc_type, wt),
                       {rco, ry, rx, rp, rk});
      },
      "conv.acc");
  return {acc, {rco, ry, rx, rp, rk}};
}

te::TensorIntrin conv_pair_dot_tile(const Conv2dParams& p, int64_t reg_n, int64_t nv,
                                    int64_t lanes, int64_t pairs, int64_t ku, int64_t ow,
                                    DataType pair, PairDotFn dot) {
  PairDotTile tile{reg_n, nv, lanes, pairs, ku, false, "rp", RemainderKind::Unrolled};
  return pair_dot_tile(tile, pair, std::move(dot), [p, ow, lanes](const te::TensorizeRegion& r) {
    internal_check(r.inputs.size() == 2 && r.output_base.size() == 5)
        << "conv_pair_dot_tile: unexpected region";
    const bool w_first = r.inputs[0].first->name == "weight.vnni";
    const auto& din = r.inputs[w_first ? 1 : 0];
    const auto& win = r.inputs[w_first ? 0 : 1];
    internal_check(win.first->name == "weight.vnni") << "conv_pair_dot_tile: no weights";
    const ir::Buffer d = din.first, wb = win.first;
    // Weight base [b, rco, ry, rx, 0, 0] names the outer reduction loops' values.
    const Expr n = r.output_base[0], b = r.output_base[1], y = r.output_base[2];
    const Expr x0 = r.output_base[3];
    const Expr rco = win.second[1], ry = win.second[2], rx = win.second[3];
    const Expr row = y * p.sh + ry * p.dh;
    const int L = static_cast<int>(lanes);
    PairDotOperands ops;
    ops.out = r.output;
    // The channel pair of one pixel as one i32 (channel 2rp in the low half).
    ops.a_pair = [=](const Expr& rp, int64_t i) {
      Expr col = ir::min(x0 + Expr(i), Expr(ow - 1)) * p.sw + rx * p.dw;
      return reinterpret(DataType::i32(),
                         ir::make_load(d, {n, rco, row, col, ir::make_ramp(rp * 2, 1, 2)}));
    };
    ops.b_vector = [=](const Expr& rp, int64_t v) {
      return ir::make_load(wb, {b, rco, ry, rx, rp, ir::make_ramp(Expr(v * 2 * L), 1, 2 * L)});
    };
    ops.out_index = [=](int64_t i, int64_t v) {
      return std::vector<Expr>{n, b, y, x0 + Expr(i), ir::make_ramp(Expr(v * L), 1, L)};
    };
    return ops;
  });
}

const OpTemplate& conv2d_bf16_x86_template() {
  static const Conv2dBf16X86 t;
  return t;
}
const OpTemplate& conv2d_bf16_arm_template() {
  static const Conv2dBf16Arm t;
  return t;
}
const OpTemplate& conv2d_f16_arm_template() {
  static const Conv2dF16Arm t;
  return t;
}

Values pack_conv_weight_vnni(const Values& wv, const Conv2dParams& p, int64_t icb, int64_t ocb) {
  internal_check(icb % 2 == 0 && p.groups == 1) << "pack_conv_weight_vnni: bad block " << icb;
  const int64_t cb = ceil_div(p.c, icb), ob = ceil_div(p.o, ocb), pairs = icb / 2;
  Values out(static_cast<size_t>(ob * cb * p.kh * p.kw * pairs * ocb * 2), 0.0f);
  for (int64_t o = 0; o < p.o; ++o)
    for (int64_t c = 0; c < p.c; ++c)
      for (int64_t ky = 0; ky < p.kh; ++ky)
        for (int64_t kx = 0; kx < p.kw; ++kx) {
          int64_t ci = c % icb;
          out[((((((o / ocb) * cb + c / icb) * p.kh + ky) * p.kw + kx) * pairs + ci / 2) * ocb +
               o % ocb) *
                  2 +
              ci % 2] = wv[((o * p.c + c) * p.kh + ky) * p.kw + kx];
        }
  return out;
}

}  // namespace kiln::schedules
