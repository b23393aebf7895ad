#include "schedules/conv2d/winograd.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>

#include "compiler/base/error.h"
#include "schedules/conv2d/blocked.h"
#include "schedules/conv2d/common.h"
#include "schedules/conv2d/winograd_transform.h"
#include "schedules/dense/dense.h"
#include "schedules/epilogue.h"
#include "schedules/f16_partial_sums.h"
#include "schedules/parallel_rule.h"

namespace kiln::schedules {

using ir::DataType;
using ir::Expr;
using ir::IterVar;
using ir::Var;

namespace {

// Σ_k coef(k) * term(k) over k < n with literal f32 coefficients: zeros dropped, ±1 as an
// add or a subtract, so the generated code does only the transform's real arithmetic.
Expr literal_sum(int64_t n, const std::function<double(int64_t)>& coef,
                 const std::function<Expr(int64_t)>& term) {
  // Terms in order, but a positive one first where there is one (no negation to start from).
  std::vector<int64_t> order;
  for (int64_t k = 0; k < n; ++k)
    if (static_cast<float>(coef(k)) > 0.0f) {
      order.push_back(k);
      break;
    }
  for (int64_t k = 0; k < n; ++k)
    if (order.empty() || k != order.front()) order.push_back(k);
  Expr sum;
  for (int64_t k : order) {
    const float c = static_cast<float>(coef(k));
    if (c == 0.0f) continue;
    Expr t = term(k);
    if (c == 1.0f) {
      sum = sum.defined() ? sum + t : t;
    } else if (c == -1.0f) {
      sum = sum.defined() ? sum - t : -t;
    } else {
      Expr p = ir::make_float(DataType::f32(), c) * t;
      sum = sum.defined() ? sum + p : p;
    }
  }
  return sum.defined() ? sum : ir::make_zero(DataType::f32());
}

// The row `row(k)` picked by the value of `index` (0 .. rows-1): a chain of selects that the
// simplifier folds to one row once the loop over `index` is unrolled.
Expr select_row(const Var& index, int64_t rows, const std::function<Expr(int64_t)>& row) {
  Expr e = row(rows - 1);
  for (int64_t k = rows - 2; k >= 0; --k) e = ir::make_select(Expr(index) == k, row(k), e);
  return e;
}

// The weight transform U = G g G^T per (output, input channel), packed as
// [alpha, alpha, O/ocb, C/icb, icb, ocb] (zero-padded channels), in double.
Values pack_winograd_weight(const Values& wv, const Conv2dParams& p, const WinogradTransform& t,
                            int64_t icb, int64_t ocb) {
  const int64_t a = t.alpha, cb = ceil_div(p.c, icb), ob = ceil_div(p.o, ocb);
  Values out(static_cast<size_t>(a * a * ob * cb * icb * ocb), 0.0f);
  for (int64_t o = 0; o < p.o; ++o)
    for (int64_t c = 0; c < p.c; ++c) {
      const float* g = &wv[static_cast<size_t>((o * p.c + c) * 9)];
      std::vector<double> gg(static_cast<size_t>(a * 3), 0.0);  // G g: alpha x 3
      for (int64_t i = 0; i < a; ++i)
        for (int64_t l = 0; l < 3; ++l)
          for (int64_t k = 0; k < 3; ++k) gg[i * 3 + l] += t.g(i, k) * double(g[k * 3 + l]);
      for (int64_t i = 0; i < a; ++i)
        for (int64_t j = 0; j < a; ++j) {
          double u = 0;  // (G g G^T)[i][j]
          for (int64_t l = 0; l < 3; ++l) u += gg[i * 3 + l] * t.g(j, l);
          const int64_t panel = ((i * a + j) * ob + o / ocb) * cb + c / icb;
          out[static_cast<size_t>((panel * icb + c % icb) * ocb + o % ocb)] = static_cast<float>(u);
        }
    }
  return out;
}

int64_t vector_registers(const Target& t) {
  return t.is_x86() && t.vector_bits < 512 ? 16 : 32;  // ymm on AVX2; zmm and v otherwise
}

class Conv2dWinograd : public Conv2dTemplate {
 public:
  std::string name() const override { return "conv2d.winograd"; }
  std::vector<DataType> dtypes() const override { return {DataType::f32(), DataType::f16()}; }

  bool applies(const Workload& w, const Target& t) const override {
    return winograd_supported(w, t) && !winograd_tile_choices(w).empty();
  }

  ConfigSpace space(const Workload& w, const Target& t) const override {
    Conv2dParams p = params(w);
    const int64_t lanes = t.lanes(w.dtype);  // an f16 GEMM's vectors are 8 halves
    std::vector<int64_t> ms = winograd_tile_choices(w);
    const int64_t tiles = p.n * ceil_div(p.out_h(), ms.front()) * ceil_div(p.out_w(), ms.front());
    ConfigSpace cs;
    cs.define_knob("m", ms);
    cs.define_knob("ic_bn", ic_bn_choices(p.c));
    cs.define_knob("oc_bn", oc_bn_choices(p.o, lanes));
    cs.define_knob("mr", row_tile_choices(tiles, {1, 2, 3, 4, 6, 8, 12}));
    cs.define_knob("k_unroll", {1, 2, 4});
    cs.define_knob("parallel", {0, 1});
    // f16: the GEMM accumulates in f16 within each input-channel block and adds the blocks
    // into f32 (2, f16_partial_sums.h), or in f32 (0).
    if (w.dtype == DataType::f16()) cs.define_knob("f16_acc", {0, 2});
    return cs;
  }

  Config fallback(const Workload& w, const Target& t) const override {
    return winograd_fallback(w, t, winograd_fallback_tile(w));
  }

  double tolerance_scale(const Workload& w) const override {
    if (w.dtype == DataType::f16()) return 1.0;  // the tile sizes offered fit f16's own
    std::vector<int64_t> ms = winograd_tile_choices(w);
    return ms.empty() ? 1.0 : winograd_error_scale(ms.back());
  }

 protected:
  static Conv2dParams params(const Workload& w) {
    user_check(winograd_form(w))
        << "conv2d.winograd needs an f32 or f16 3x3 conv2d with stride 1, dilation 1 and groups "
           "1, got "
        << w.str() << " (use conv2d.nchwc)";
    return conv2d_params(w);
  }

  void check(const Workload& w, const Target& t) const override {
    params(w);
    user_check(winograd_supported(w, t))
        << "conv2d.winograd: f16 needs an AArch64 target with +fullfp16, got " << t.name;
    user_check(!winograd_tile_choices(w).empty())
        << "conv2d.winograd: no output tile size suits " << w.str() << " (use conv2d.nchwc)";
  }

  ScheduledKernel schedule(const Workload& w, const Target& t, const Config& cfg) const override;
};

// The sizes and switches of one Winograd kernel, from the workload, target and config: what
// every step below reads.
struct WinogradDims {
  Conv2dParams p;
  const WinogradTransform& tf;  // F(m, 3)
  DataType st;                  // the storage type: data, weights and V
  bool f16_blocks;              // f16: the GEMM sums in f16 per channel block, then in f32
  bool parallel;
  int64_t lanes, m, icb, ocb;
  int64_t a, oh, ow;      // alpha = m + 2; the output's height and width
  int64_t th, tw, tiles;  // tiles down, across, and over the whole batch
  int64_t cb, ob;         // input and output channel blocks
};

// The kernel's tensors, in the order they are computed; each compute step fills its own and
// each schedule step schedules them.
struct WinogradTensors {
  te::Tensor padded;          // zero-padded data
  te::Tensor d1, vt;          // input transform: rows (B^T d), then V
  IterVar rco, rci;           // the GEMM's reduction (f32 accumulation)
  F16PartialSums blocks;      // f16 blocks: the GEMM's f16 partial sums and f32 sum
  te::Tensor macc, mt;        // GEMM: the accumulators, then M
  te::Tensor o1, ytile, out;  // output transform: rows (A^T M), Y, then the epilogue
};

// Reads the config into the kernel's sizes, in the order the knobs were always read (an
// invalid config fails on the same knob).
WinogradDims winograd_dims(const Conv2dParams& p, const Workload& w, const Target& t,
                           const Config& cfg) {
  // Data, weights and the transformed input (the GEMM's operands) are stored in the
  // workload's type; the transforms compute in f32, as does the GEMM's accumulation across
  // channel blocks: f16's 11 bits would lose too much to F(4)'s and F(6)'s larger
  // coefficients and sums.
  const DataType f32 = DataType::f32(), st = w.dtype;
  const bool f16_blocks =
      st == DataType::f16() && f16_acc_kind(cfg["f16_acc"]) == F16AccKind::F16Blocks;
  const int64_t lanes = t.lanes(f32), m = cfg["m"], icb = cfg["ic_bn"], ocb = cfg["oc_bn"];
  const WinogradTransform& tf = winograd_f3(m);
  const int64_t a = tf.alpha, oh = p.out_h(), ow = p.out_w();
  const int64_t th = ceil_div(oh, m), tw = ceil_div(ow, m), tiles = p.n * th * tw;
  const int64_t cb = ceil_div(p.c, icb), ob = ceil_div(p.o, ocb);
  const bool parallel = cfg["parallel"] != 0;
  return {p, tf, st, f16_blocks, parallel, lanes, m, icb, ocb, a, oh, ow, th, tw, tiles, cb, ob};
}

// Zero-padded input covering every tile's window (the last tiles may reach past the pad), so
// the input transform reads every window without bounds checks.
te::Tensor compute_padded_input(const WinogradDims& d, const te::Tensor& data) {
  const Conv2dParams& p = d.p;
  const DataType st = d.st;
  const int64_t m = d.m, th = d.th, tw = d.tw, cb = d.cb, icb = d.icb;
  const int64_t hp = th * m + 2, wp = tw * m + 2;
  return te::compute(
      {p.n, cb, hp, wp, icb},
      [&](const std::vector<Var>& v) -> Expr {
        Expr y = v[2], x = v[3];
        Expr inside = y >= p.ph && y < p.h + p.ph && x >= p.pw && x < p.w + p.pw;
        Expr yy = ir::max(ir::min(y - p.ph, Expr(p.h - 1)), Expr(0));
        Expr xx = ir::max(ir::min(x - p.pw, Expr(p.w - 1)), Expr(0));
        return ir::make_select(inside, data(v[0], v[1], yy, xx, v[4]), ir::make_zero(st));
      },
      "data.pad");
}

// Input transform, rows then columns: d1 = B^T d, V = d1 B, in f32 from the padded data, V
// stored in the storage type as the GEMM's operand (ts.d1, ts.vt).
void compute_input_transform(const WinogradDims& d, WinogradTensors& ts) {
  const DataType f32 = DataType::f32(), st = d.st;
  const WinogradTransform& tf = d.tf;
  const int64_t m = d.m, a = d.a, th = d.th, tw = d.tw, tiles = d.tiles, cb = d.cb, icb = d.icb;
  const te::Tensor& padded = ts.padded;
  auto tile_y = [&](const Expr& t_) { return (t_ / tw) % th * m; };
  auto tile_x = [&](const Expr& t_) { return t_ % tw * m; };
  te::Tensor d1 = te::compute(
      {cb, tiles, a, a, icb},
      [&](const std::vector<Var>& v) -> Expr {
        Expr n = v[1] / (th * tw), y0 = tile_y(v[1]), x0 = tile_x(v[1]);
        return select_row(v[2], a, [&](int64_t xi) {
          return literal_sum(
              a, [&](int64_t i) { return tf.bt(xi, i); },
              [&](int64_t i) { return ir::make_cast(f32, padded(n, v[0], y0 + i, x0 + v[3], v[4])); });
        });
      },
      "winograd.in_rows");
  te::Tensor vt = te::compute(
      {a, a, cb, tiles, icb},
      [&](const std::vector<Var>& v) -> Expr {
        return ir::make_cast(st, select_row(v[1], a, [&](int64_t nu) {
          return literal_sum(
              a, [&](int64_t j) { return tf.bt(nu, j); },
              [&](int64_t j) { return d1(v[2], v[3], v[0], j, v[4]); });
        }));
      },
      "winograd.in");
  ts.d1 = d1;
  ts.vt = vt;
}

// Batched GEMM over the alpha^2 positions, accumulated in registers (Local) per tile.
// f16 blocks: f16 sums over one channel block (`fmla .8h`), added into f32 per block
// (ts.rco, ts.rci, ts.blocks, ts.macc, ts.mt). The reduce axes are made in both cases, as
// they always were, though the f16 blocks bring their own.
void compute_batched_gemm(const WinogradDims& d, const te::Tensor& weight, WinogradTensors& ts) {
  const DataType f32 = DataType::f32();
  const bool f16_blocks = d.f16_blocks;
  const int64_t a = d.a, ob = d.ob, tiles = d.tiles, cb = d.cb, icb = d.icb, ocb = d.ocb;
  const te::Tensor& vt = ts.vt;
  IterVar rco = te::reduce_axis(cb, "rco"), rci = te::reduce_axis(icb, "rci");
  F16PartialSums blocks;
  te::Tensor macc;
  if (f16_blocks) {
    blocks = f16_partial_sums(
        {a, a, ob, tiles, ocb}, {cb, icb}, {"rco", "rci"}, 1,
        [&](const std::vector<Expr>& v, const std::vector<Expr>& r) {
          return vt(v[0], v[1], r[0], v[3], r[1]) * weight(v[0], v[1], v[2], r[0], r[1], v[4]);
        },
        "winograd.gemm.acc");
    macc = blocks.acc;
  } else {
    macc = te::compute(
        {a, a, ob, tiles, ocb},
        [&](const std::vector<Var>& v) -> Expr {
          Expr in = ir::make_cast(f32, vt(v[0], v[1], rco, v[3], rci));
          return te::sum(in * ir::make_cast(f32, weight(v[0], v[1], v[2], rco, rci, v[4])),
                         {rco, rci});
        },
        "winograd.gemm.acc");
  }
  te::Tensor mt = te::compute(
      {a, a, ob, tiles, ocb},
      [&](const std::vector<Var>& v) -> Expr { return macc(v[0], v[1], v[2], v[3], v[4]); },
      "winograd.gemm");
  ts.rco = rco;
  ts.rci = rci;
  ts.blocks = blocks;
  ts.macc = macc;
  ts.mt = mt;
}

// Output transform, rows then columns: o1 = A^T M, Y = o1 A; then the epilogue, which
// writes the blocked output in the workload's type (ts.o1, ts.ytile, ts.out).
void compute_output_transform(const WinogradDims& d, const Workload& w, const EpilogueTensors& ep,
                              WinogradTensors& ts) {
  const DataType f32 = DataType::f32();
  const WinogradTransform& tf = d.tf;
  const Conv2dParams& p = d.p;
  const int64_t m = d.m, a = d.a, oh = d.oh, ow = d.ow, th = d.th, tw = d.tw, ob = d.ob,
                ocb = d.ocb;
  const te::Tensor& mt = ts.mt;
  te::Tensor o1 = te::compute(
      {p.n, ob, th, tw, m, a, ocb},
      [&](const std::vector<Var>& v) -> Expr {
        Expr t_ = (v[0] * th + v[2]) * tw + v[3];
        return select_row(v[4], m, [&](int64_t yi) {
          return literal_sum(
              a, [&](int64_t k) { return tf.at(yi, k); },
              [&](int64_t k) { return mt(Expr(k), v[5], v[1], t_, v[6]); });
        });
      },
      "winograd.out_rows");
  te::Tensor ytile = te::compute(
      {p.n, ob, th, tw, m, m, ocb},
      [&](const std::vector<Var>& v) -> Expr {
        return select_row(v[5], m, [&](int64_t xi) {
          return literal_sum(
              a, [&](int64_t k) { return tf.at(xi, k); },
              [&](int64_t k) { return o1(v[0], v[1], v[2], v[3], v[4], Expr(k), v[6]); });
        });
      },
      "winograd.out");
  te::Tensor out = te::compute(
      {p.n, ob, oh, ow, ocb},
      [&](const std::vector<Var>& v) -> Expr {
        Expr value = ytile(v[0], v[1], v[2] / m, v[3] / m, v[2] % m, v[3] % m, v[4]);
        std::vector<Expr> idx(v.begin(), v.end());
        // f16 with param out_f32=1: the f32 output transform's values, unrounded.
        DataType ot = w.param_or("out_f32", 0) != 0 ? f32 : w.dtype;
        return ir::make_cast(ot, apply_epilogue(w, ep, value, idx, v[1] * ocb + v[4]));
      },
      "conv");
  ts.o1 = o1;
  ts.ytile = ytile;
  ts.out = out;
}

// Input transform: per (channel block, tile), the alpha x alpha window in registers. The
// row pass (d1) is computed inside V's fused (channel block, tile) loop, in Local scope, so
// it never reaches memory; both unroll their alpha x alpha loops so the coefficients fold.
void schedule_input_transform(te::Schedule& sch, const WinogradTensors& ts, bool parallel) {
  const te::Tensor &vt = ts.vt, &d1 = ts.d1;
  te::Stage s = sch[vt];
  s.reorder({s.axis(2), s.axis(3), s.axis(0), s.axis(1), s.axis(4)});
  IterVar outer = s.fuse(s.axis(2), s.axis(3));
  if (parallel) s.parallel(outer);
  s.unroll(s.axis(0));
  s.unroll(s.axis(1));
  s.vectorize(s.axis(4));
  te::Stage r = sch[d1];
  r.set_scope(ir::MemScope::Local);
  r.compute_at(s, outer);
  r.unroll(r.axis(2));
  r.unroll(r.axis(3));
  r.vectorize(r.axis(4));
}

// GEMM: mr tiles x oc_bn channels of accumulators over the whole reduction, register-blocked
// like dense.packed: M's loops are split into the register tile, and the accumulators
// (Local) are computed at its tile loop with the reduction outside the unrolled tile. f16
// blocks hand the inner block reduction to schedule_f16_partial_sums; f32 splits the inner
// channel loop (rci) by gcd(k_unroll, ic_bn) and unrolls it.
void schedule_batched_gemm(te::Schedule& sch, const WinogradDims& d, const WinogradTensors& ts,
                           const Target& t, const Config& cfg) {
  const DataType st = d.st;
  const bool parallel = d.parallel, f16_blocks = d.f16_blocks;
  const int64_t lanes = d.lanes, icb = d.icb;
  const te::Tensor &mt = ts.mt, &macc = ts.macc;
  const F16PartialSums& blocks = ts.blocks;
  const IterVar &rco = ts.rco, &rci = ts.rci;
  te::Stage s = sch[mt];
  auto [to, ti] = s.split(s.axis(3), cfg["mr"]);
  auto [ov, ol] = s.split(s.axis(4), lanes);
  IterVar outer = s.fuse(s.fuse(s.axis(0), s.axis(1)), s.axis(2));
  s.reorder({outer, to, ti, ov, ol});
  if (parallel) s.parallel(outer);
  s.unroll(ti);
  s.unroll(ov);
  s.vectorize(ol);
  te::Stage acc = sch[macc];
  acc.set_scope(ir::MemScope::Local);
  acc.compute_at(s, to);
  auto [aov, aol] = acc.split(acc.axis(4), lanes);
  const int64_t ku = std::gcd(cfg["k_unroll"], icb);
  if (f16_blocks) {
    acc.reorder({acc.axis(0), acc.axis(1), acc.axis(2), blocks.outer[0], acc.axis(3), aov, aol});
    schedule_f16_partial_sums(sch, blocks, t.lanes(st), ku);
  } else {
    std::vector<IterVar> order = {acc.axis(0), acc.axis(1), acc.axis(2), rco};
    IterVar k_inner = rci;
    if (ku > 1) {
      auto [ko, ki] = acc.split(rci, ku);
      order.push_back(ko);
      k_inner = ki;
    }
    order.insert(order.end(), {k_inner, acc.axis(3), aov, aol});
    acc.reorder(order);
    if (ku > 1) acc.unroll(k_inner);
  }
  acc.unroll(acc.axis(3));
  acc.unroll(aov);
  acc.vectorize(aol);
}

// Output transform and epilogue per m x m output tile, the tile's values in registers: the
// output's rows and columns are split by m so each tile's Y and its row pass o1 are computed
// (Local) inside the tile's loop, unrolled so the coefficients fold.
void schedule_output_transform(te::Schedule& sch, const WinogradDims& d,
                               const WinogradTensors& ts) {
  const bool parallel = d.parallel;
  const int64_t m = d.m, lanes = d.lanes;
  const te::Tensor &out = ts.out, &ytile = ts.ytile, &o1 = ts.o1;
  te::Stage s = sch[out];
  auto [yo, yi] = s.split(s.axis(2), m);
  auto [xo, xi] = s.split(s.axis(3), m);
  auto [ov, ol] = s.split(s.axis(4), lanes);
  s.reorder({s.axis(0), s.axis(1), yo, xo, yi, xi, ov, ol});
  IterVar outer = s.fuse(s.fuse(s.axis(0), s.axis(1)), yo);
  if (parallel) s.parallel(outer);
  s.unroll(yi);
  s.unroll(xi);
  s.unroll(ov);
  s.vectorize(ol);
  // The tile's values (Y), and its row pass (o1) inside Y's loops (its only reader).
  te::Stage parent = s;
  IterVar at = xo;
  for (const te::Tensor& stage : {ytile, o1}) {
    te::Stage r = sch[stage];
    r.set_scope(ir::MemScope::Local);
    r.compute_at(parent, at);
    at = r.axis(3);
    auto [rv, rl] = r.split(r.axis(6), lanes);
    r.unroll(r.axis(4));
    r.unroll(r.axis(5));
    r.unroll(rv);
    r.vectorize(rl);
    parent = r;
  }
}

ScheduledKernel Conv2dWinograd::schedule(const Workload& w, const Target& t,
                                         const Config& cfg) const {
  const WinogradDims d = winograd_dims(params(w), w, t, cfg);
  const Conv2dParams& p = d.p;
  te::Tensor data = te::placeholder({p.n, d.cb, p.h, p.w, d.icb}, d.st, "data");
  te::Tensor weight =
      te::placeholder({d.a, d.a, d.ob, d.cb, d.icb, d.ocb}, d.st, "weight.winograd");
  EpilogueTensors ep = make_epilogue_placeholders(w, d.ob * d.ocb, {p.n, d.ob, d.oh, d.ow, d.ocb});

  WinogradTensors ts;
  ts.padded = compute_padded_input(d, data);
  compute_input_transform(d, ts);
  compute_batched_gemm(d, weight, ts);
  compute_output_transform(d, w, ep, ts);

  te::Schedule sch({ts.out});
  schedule_copy_stage(sch, ts.padded, d.parallel);
  schedule_input_transform(sch, ts, d.parallel);
  schedule_batched_gemm(sch, d, ts, t, cfg);
  schedule_output_transform(sch, d, ts);

  const int64_t icb = d.icb, ocb = d.ocb;
  return {std::move(sch), with_epilogue_args({data, weight}, ep, ts.out),
          blocked_conv_args(inputs(w), output(w), p, icb, ocb,
                            [p, tf = &d.tf, icb, ocb](const Values& v) {
                              return pack_winograd_weight(v, p, *tf, icb, ocb);
                            },
                            d.a * d.a * d.ob * d.cb * icb * ocb),
          p.flops()};
}

}  // namespace

const OpTemplate& conv2d_winograd_template() {
  static const Conv2dWinograd t;
  return t;
}

bool winograd_form(const Workload& w) {
  if (w.op != "conv2d" || (w.dtype != DataType::f32() && w.dtype != DataType::f16())) return false;
  Conv2dParams p = conv2d_params(w);
  return p.kh == 3 && p.kw == 3 && p.sh == 1 && p.sw == 1 && p.dh == 1 && p.dw == 1 &&
         p.groups == 1;
}

bool winograd_supported(const Workload& w, const Target& t) {
  if (!winograd_form(w)) return false;
  return w.dtype == DataType::f32() || (t.is_aarch64() && t.has("fullfp16"));
}

double winograd_error_scale(int64_t m) {
  switch (m) {
    case 2: return 1.0;
    case 4: return 2.0;
    case 6: return 5.0;
  }
  user_error() << "winograd: output tile m must be 2, 4 or 6, got " << m;
  return 0;
}

double winograd_expected_error(int64_t m, int64_t channels) {
  // Max error measured on ResNet-18's 64 -> 64 56x56 layer, random inputs (bench/README.md).
  // Over 16 .. 512 channels it grew more slowly than sqrt(C); sqrt keeps this an upper bound.
  const double at_64 = m == 2 ? 1.7e-6 : m == 4 ? 1.1e-5 : 4.3e-5;
  return at_64 * std::sqrt(double(std::max<int64_t>(channels, 64)) / 64.0);
}

std::vector<int64_t> winograd_tile_choices(const Workload& w) {
  if (!winograd_form(w)) return {};
  Conv2dParams p = conv2d_params(w);
  std::vector<int64_t> out;
  for (int64_t m : {2, 4, 6}) {
    // Twice the expected error must stay within the tolerance the template declares.
    if (w.dtype == DataType::f16()) {
      if (2 * winograd_expected_error_f16(m, p.c) > 1e-2) continue;
    } else if (2 * winograd_expected_error(m, p.c) > 1e-4 * winograd_error_scale(m)) {
      continue;
    }
    // Tiles that are more than half padding waste more than the transform saves.
    const double useful = double(p.out_h() * p.out_w()) /
                          double(ceil_div(p.out_h(), m) * ceil_div(p.out_w(), m) * m * m);
    if (m > 2 && useful < 0.5) continue;
    out.push_back(m);
  }
  return out;
}

namespace {

// Tiles of the whole output with m x m tiles.
int64_t tile_count(const Workload& w, int64_t m) {
  Conv2dParams p = conv2d_params(w);
  return p.n * ceil_div(p.out_h(), m) * ceil_div(p.out_w(), m);
}

// Below this many tiles, each transformed weight (alpha^2 / 9 times the direct weights) is
// used too few times to pay for streaming it: the GEMM is bound by memory, not arithmetic.
// Measured (bench/README.md): F(2) beat direct by 1.2-1.4x on ResNet-18's 7x7 layer (16
// tiles) on a lightly loaded machine, though not under heavy memory contention; F(4) lost to
// F(2) at 14x14 (16 tiles) and won at 28x28 (49).
constexpr int64_t kMinTiles = 16;

// Untuned networks take Winograd only from this many tiles: inside a network the transformed
// weights (16/9 of the direct ones for F(2)) arrive cold from memory on every call, which an
// isolated benchmark with warm caches does not show. Measured in ResNet-18 on each kind of
// x86 (bench/README.md), on its 512-channel 7x7 layers (16 F(2) tiles):
//   - AVX-512 (Xeon, 1 thread, under load): F(2) 6.3 ms in the network against 2.1 ms direct,
//     though F(2) won in isolation (1.45 against 1.69 ms). Re-measured once the runtime kept
//     its workspace between calls (an Emerald Rapids Xeon, 1 thread, `kiln run --profile`,
//     three runs): F(2) 2.55-2.73 ms per layer against 2.45-2.53 direct. Both stream their
//     weights from memory (9.4 MB direct, 16.8 MB transformed), so direct stays;
//   - AVX2 (Zen 3, idle): F(2) 2.4 ms in the network against 4.0 ms direct at 1 thread, 1.37
//     against 2.15 ms at 2 threads; the whole network 14% faster either way. Direct conv is
//     further from its peak with 256-bit vectors, so Winograd's fewer multiplications pay on
//     fewer tiles.
// Other targets keep the stricter AVX-512 figure until they are measured on hardware.
int64_t min_tiles_in_network(const Target& t) {
  return t.is_x86() && t.vector_bits < 512 ? 16 : 32;
}

}  // namespace

double winograd_expected_error_f16(int64_t m, int64_t) {
  // Max error against double, f16 blocks, measured under qemu with 64 and 256 input
  // channels (tests/kernels/winograd_f16_test.cpp): F(2) 4.9e-3, F(4) 3.3e-2, F(6) 1.7e-1
  // (with f32 accumulation 2.2e-3, 1.2e-2, 5.0e-2). It is the f16 rounding of V and U,
  // amplified by the output transform, and did not grow with the channels: the blocks'
  // f32 sums keep the long reduction's own error small.
  return m == 2 ? 5e-3 : m == 4 ? 3.3e-2 : 1.7e-1;
}

// f16 on AArch64: vectors of 8 halves; per 8 output channels of a tile, one f16 block
// accumulator and two f32 (.4s) sums, so 2 vectors x 4 tiles hold 24 of the 32 registers.
static Config winograd_fallback_f16(const Workload& w, int64_t m) {
  Conv2dParams p = conv2d_params(w);
  int64_t vecs = std::min<int64_t>(2, ceil_div(p.o, 8));
  int64_t mr = fit_rows(4, tile_count(w, m), {4, 3, 2, 1});
  return Config({{"m", m},
                 {"ic_bn", pick_ic_bn(p.c, 16)},
                 {"oc_bn", vecs * 8},
                 {"mr", mr},
                 {"k_unroll", 1},
                 {"parallel", worth_parallel(p.flops()) ? 1 : 0},
                 {"f16_acc", static_cast<int64_t>(F16AccKind::F16Blocks)}});
}

int64_t winograd_fallback_tile(const Workload& w) {
  std::vector<int64_t> ms = winograd_tile_choices(w);
  user_check(!ms.empty()) << "conv2d.winograd: no output tile size suits " << w.str();
  // F(4) does 4x fewer multiplications than direct against F(2)'s 2.25x, but each of its
  // transformed weights is twice F(2)'s size: it needs twice as many tiles to reuse them.
  // F(6) gains little more than F(4) for 4x its error; tuning may still pick it.
  bool four = std::find(ms.begin(), ms.end(), 4) != ms.end();
  return four && tile_count(w, 4) >= 2 * kMinTiles ? 4 : ms.front();
}

Config winograd_fallback(const Workload& w, const Target& t, int64_t m) {
  Conv2dParams p = conv2d_params(w);
  if (w.dtype == DataType::f16()) return winograd_fallback_f16(w, m);
  const int64_t lanes = t.lanes(DataType::f32());
  // The GEMM's register tile as dense.packed's: accumulators fill 3/4 of the registers,
  // 4 vectors of output channels (2 on AVX2) by as many tiles as fit.
  int64_t vecs = std::min<int64_t>(t.is_x86() && lanes < 16 ? 2 : 4, ceil_div(p.o, lanes));
  if (vecs == 3) vecs = 2;
  int64_t mr = fit_rows(vector_registers(t) * 3 / 4 / vecs, tile_count(w, m),
                        {12, 8, 6, 4, 3, 2, 1});
  return Config({{"m", m},
                 {"ic_bn", pick_ic_bn(p.c, vecs * lanes)},
                 {"oc_bn", vecs * lanes},
                 {"mr", mr},
                 {"k_unroll", 1},
                 {"parallel", worth_parallel(p.flops()) ? 1 : 0}});
}

bool winograd_preferred(const Workload& w, const Target& t) {
  if (!winograd_supported(w, t) || winograd_tile_choices(w).empty()) return false;
  // f16 has been checked under qemu only: with no timing on ARM hardware, untuned networks
  // keep the direct template and tuning decides.
  if (w.dtype != DataType::f32()) return false;
  // Few channels: the transforms (per channel) cost as much as the GEMM saves.
  if (w.param("C") < 16 || w.param("O") < 16) return false;
  return tile_count(w, winograd_fallback_tile(w)) >= min_tiles_in_network(t);
}

}  // namespace kiln::schedules
