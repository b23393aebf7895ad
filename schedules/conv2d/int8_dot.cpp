#include <algorithm>

#include "compiler/base/error.h"
#include "compiler/ir/op.h"
#include "schedules/conv2d/blocked.h"
#include "schedules/conv2d/int8.h"
#include "schedules/conv2d/int8_base.h"
#include "schedules/intrinsics.h"

namespace kiln::schedules {

using ir::DataType;
using ir::Expr;
using ir::IterVar;
using ir::Var;

namespace {

// The packed weights: [O/ocb][C/icb][KH][KW][icb/4][ocb][4] int8 (each output channel's four
// input channels adjacent, one 32-bit lane of the dot instruction), then per output channel
// the int32 zero-point term zero * Σ weights as four bytes, low first. The term depends only
// on the weights, so it is computed where they are packed and travels with them.
struct QuadWeights {
  int64_t ob, cb, kh, kw, quads, ocb;
  int64_t row() const { return ocb * 4; }  // bytes of one quad of every channel of a block
  int64_t sums_at() const { return ob * cb * kh * kw * quads * row(); }
  int64_t elements() const { return sums_at() + ob * ocb * 4; }
  Expr index(const Expr& b, const Expr& co, const Expr& y, const Expr& x, const Expr& q,
             const Expr& byte) const {
    return ((((b * cb + co) * kh + y) * kw + x) * quads + q) * row() + byte;
  }
};

QuadWeights quad_weights(const Conv2dParams& p, int64_t icb, int64_t ocb) {
  return {ceil_div(p.o, ocb), ceil_div(p.c, icb), p.kh, p.kw, icb / 4, ocb};
}

Values pack_quad_weight(const Values& wv, const Conv2dParams& p, int64_t icb, int64_t ocb,
                        int64_t zero) {
  const QuadWeights q = quad_weights(p, icb, ocb);
  Values out(static_cast<size_t>(q.elements()), 0.0f);
  for (int64_t o = 0; o < p.o; ++o) {
    int64_t sum = 0;
    for (int64_t c = 0; c < p.c; ++c)
      for (int64_t ky = 0; ky < p.kh; ++ky)
        for (int64_t kx = 0; kx < p.kw; ++kx) {
          const float v = wv[((o * p.c + c) * p.kh + ky) * p.kw + kx];
          const int64_t ci = c % icb;
          const int64_t at =
              ((((o / ocb * q.cb + c / icb) * q.kh + ky) * q.kw + kx) * q.quads + ci / 4) *
                  q.row() +
              (o % ocb) * 4 + ci % 4;
          out[at] = v;
          sum += static_cast<int64_t>(v);
        }
    // Two's complement bytes of zero * sum, each as the signed value an i8 holds.
    const auto term = static_cast<uint32_t>(static_cast<int32_t>(zero * sum));
    for (int64_t j = 0; j < 4; ++j)
      out[q.sums_at() + o * 4 + j] = static_cast<float>(static_cast<int8_t>(term >> (8 * j)));
  }
  return out;
}

std::vector<int64_t> quad_ic_choices(int64_t c) {
  std::vector<int64_t> out;
  for (int64_t b : ic_bn_choices(c, true))
    if (b % 4 == 0) out.push_back(b);
  const int64_t whole = ceil_div(c, 4) * 4;
  if (whole <= 64 && std::find(out.begin(), out.end(), whole) == out.end()) out.push_back(whole);
  std::sort(out.begin(), out.end());
  return out;
}

class Conv2dInt8Dot final : public Conv2dInt8Base {
 public:
  std::string name() const override { return "conv2d.int8.dot"; }

  bool applies(const Workload& w, const Target& t) const override {
    return is_int8_conv(w) && quad_dot_lanes(t) > 0;
  }

  ConfigSpace space(const Workload& w, const Target& t) const override {
    const Conv2dParams p = conv2d_params(w);
    return tile_space(p, quad_ic_choices(p.c), quad_dot_lanes(t));
  }

  Config fallback(const Workload& w, const Target& t) const override {
    const int64_t lanes = quad_dot_lanes(t);
    const Conv2dParams p = conv2d_params(w);
    // Accumulators within the register file beside the weight vectors (the broadcast is
    // the dot's memory operand on x86): AVX-512 4 zmm x 6 pixels of 32 registers; AVX-VNNI
    // 2 ymm x 6 of 16; NEON 4 q x 6 of 32. Blocks of 64 channels rather than 2 zmm x 12:
    // the next conv then reads blocks of 64 too, and 64 in, 64 out beat 32 and 32 on every
    // ResNet 3x3 layer on an AVX-512 Xeon (7x7 to 56x56: 0.36-0.50 ms against 0.44-0.62).
    // Two quads per iteration: with four, a block of 32 channels (what the producer of a
    // network's activation writes, and the block this conv then reads) is a loop of two
    // iterations, which LLVM writes out, and the 24-accumulator tile spills (ResNet's
    // 512-channel 3x3 on 7x7: 0.59-0.69 ms at k_unroll 4, 0.43-0.55 at 2, on an AVX-512 Xeon).
    const int64_t icb = ceil_div(pick_ic_bn(p.c, 64, true), 4) * 4;
    return tile_fallback(p, icb, icb >= 8 ? 2 : 1, lanes, lanes == 8 ? 2 : 4, lanes == 8 ? 12 : 24);
  }

 protected:
  void check(const Workload& w, const Target& t) const override {
    Conv2dInt8Base::check(w, t);
    user_check(quad_dot_lanes(t) > 0)
        << name() << ": target " << t.name << " has no byte dot instruction (x86 AVX512-VNNI or "
        << "AVX-VNNI, AArch64 dotprod)";
  }

  ScheduledKernel schedule(const Workload& w, const Target& t, const Config& cfg) const override {
    const Conv2dParams p = conv2d_params(w);
    const Requantize r = requantize_params(w);
    const bool with_bias = w.has_epilogue("bias");
    const DataType i32 = DataType::i32(), dot_t = quad_dot_data_type(t);
    const int64_t lanes = quad_dot_lanes(t);
    const int64_t icb = cfg["ic_bn"], ocb = cfg["oc_bn"], reg_n = cfg["reg_n"];
    user_check(icb % 4 == 0) << name() << ": ic_bn must be a multiple of 4, got " << icb;
    const QuadWeights qw = quad_weights(p, icb, ocb);
    const int64_t oh = p.out_h(), ow = p.out_w(), owp = ceil_div(ow, reg_n) * reg_n;
    // The instruction reads the data in dot_t: u8 data moves to i8 (or back) by 128, and
    // its zero point with it.
    const int64_t shift = w.dtype == dot_t ? 0 : (dot_t == DataType::u8() ? 128 : -128);
    const int64_t zero = r.a_zero + shift;

    te::Tensor data = te::placeholder({p.n, qw.cb, p.h, p.w, icb}, w.dtype, "data");
    te::Tensor weight = te::placeholder({qw.elements()}, DataType::i8(), "weight.quads");
    te::Tensor bias = with_bias ? te::placeholder({qw.ob * ocb}, i32, "bias") : te::Tensor();
    te::Tensor scale =
        r.requantize ? te::placeholder({qw.ob * ocb}, DataType::f32(), "scale") : te::Tensor();
    // The data as the instruction reads it, padded with the zero point (the quantized 0.0):
    // a copy once per call, none for an unpadded conv whose data needs no shift.
    const bool copied = p.ph != 0 || p.pw != 0 || shift != 0;
    te::Tensor moved = data;
    if (copied) moved = moved_data(p, data, dot_t, shift, zero, "data.dot");
    IterVar rco = te::reduce_axis(qw.cb, "rco"), ry = te::reduce_axis(p.kh, "ry");
    IterVar rx = te::reduce_axis(p.kw, "rx"), rq = te::reduce_axis(qw.quads, "rp");
    IterVar rk = te::reduce_axis(4, "rk");
    // Whole reg_n tiles: pixels past OW read pixel OW-1 and are never stored.
    te::Tensor acc = te::compute(
        {p.n, qw.ob, oh, owp, ocb},
        [&](const std::vector<Var>& v) -> Expr {
          Expr x = ir::min(v[3], Expr(ow - 1));
          Expr in = moved(v[0], rco, v[2] * p.sh + ry->var * p.dh, x * p.sw + rx->var * p.dw,
                          rq->var * 4 + rk->var);
          Expr wt = weight(qw.index(v[1], rco->var, ry->var, rx->var, rq->var, v[4] * 4 + rk->var));
          return te::sum(ir::make_cast(i32, in) * ir::make_cast(i32, wt), {rco, ry, rx, rq, rk});
        },
        "conv.acc");
    // zero * Σ weights per channel, from its four bytes.
    te::Tensor zero_term = te::compute(
        {qw.ob * ocb},
        [&](const std::vector<Var>& v) -> Expr {
          Expr at = Expr(qw.sums_at()) + v[0] * 4;
          auto byte = [&](int64_t j) {
            return ir::make_cast(i32, ir::make_cast(DataType::u8(), weight(at + Expr(j))));
          };
          return byte(0) + byte(1) * Expr(1 << 8) + byte(2) * Expr(1 << 16) +
                 ir::make_cast(i32, weight(at + Expr(3))) * Expr(1 << 24);
        },
        "conv.zero_term");
    const DataType ot = int8_output_type(w);
    te::Tensor out = te::compute(
        {p.n, qw.ob, oh, ow, ocb},
        [&](const std::vector<Var>& v) -> Expr {
          Expr channel = v[1] * ocb + v[4];
          Expr sum = acc(std::vector<Expr>(v.begin(), v.end())) - zero_term(channel);
          if (with_bias) sum = sum + bias(channel);
          return requantize_expr(r, ot, sum, r.requantize ? scale(channel) : Expr());
        },
        "conv");

    te::Schedule sch({out});
    if (copied) schedule_copy_stage(sch, moved, cfg["parallel"] != 0);
    TileKnobs k{reg_n, lanes, cfg["parallel"], cfg["oc_inner"], cfg["unroll_kw"] != 0, false, 1,
                {},    rx};
    schedule_register_tile(sch, out, acc, k, {rco, ry, rx, rq, rk});
    sch[acc].tensorize(rq, quad_tile(p, qw, reg_n, ocb / lanes, lanes, cfg["k_unroll"], t));

    return finish(
        w, std::move(sch), {data, weight, bias, scale, out}, icb, ocb,
        [p, icb, ocb, zero](const Values& v) { return pack_quad_weight(v, p, icb, ocb, zero); },
        qw.elements());
  }

 private:
  // All channel quads of one (channel block, tap) for a reg_n x (nv*lanes) tile: per quad, nv
  // weight vectors, one broadcast 32-bit quad per pixel, quad_dot_i8 into the accumulators.
  static te::TensorIntrin quad_tile(const Conv2dParams& p, const QuadWeights& qw, int64_t reg_n,
                                    int64_t nv, int64_t lanes, int64_t ku, const Target& t) {
    PairDotTile tile{reg_n, nv, lanes, qw.quads, ku, false, "rp", RemainderKind::Unrolled};
    PairDotFn dot = [t](Expr acc, Expr a, Expr b) {
      return quad_dot_i8(std::move(acc), std::move(a), std::move(b), t);
    };
    const int64_t ow = p.out_w(), row = qw.row();
    return pair_dot_tile(
        tile, quad_dot_data_type(t), std::move(dot), [=](const te::TensorizeRegion& r) {
          internal_check(r.inputs.size() == 2 && r.output_base.size() == 5)
              << "conv2d.int8.dot: unexpected region";
          const bool w_first = r.inputs[0].first->name == "weight.quads";
          const auto& din = r.inputs[w_first ? 1 : 0];
          const auto& win = r.inputs[w_first ? 0 : 1];
          internal_check(win.first->name == "weight.quads" && din.second.size() == 5)
              << "conv2d.int8.dot: no weights";
          // The data base [n, rco, row, col of the tile's first pixel, 0] and the weights'
          // flat base name the outer reduction loops' values.
          const ir::Buffer d = din.first, wb = win.first;
          const Expr n = din.second[0], rco = din.second[1], y = din.second[2];
          const Expr col0 = din.second[3], x0 = r.output_base[3], wbase = win.second[0];
          const int L = static_cast<int>(lanes);
          PairDotOperands ops;
          ops.out = r.output;
          ops.a_pair = [=](const Expr& q, int64_t i) {
            Expr col = col0 + (ir::min(x0 + Expr(i), Expr(ow - 1)) - x0) * p.sw;
            return reinterpret(DataType::i32(),
                               ir::make_load(d, {n, rco, y, col, ir::make_ramp(q * 4, 1, 4)}));
          };
          ops.b_vector = [=](const Expr& q, int64_t v) {
            return ir::make_load(wb, {ir::make_ramp(wbase + q * row + Expr(v * 4 * L), 1, 4 * L)});
          };
          ops.out_index = [=](int64_t i, int64_t v) {
            return std::vector<Expr>{r.output_base[0], r.output_base[1], r.output_base[2],
                                     x0 + Expr(i), ir::make_ramp(Expr(v * L), 1, L)};
          };
          return ops;
        });
  }
};

}  // namespace

const OpTemplate& conv2d_int8_dot_template() {
  static const Conv2dInt8Dot t;
  return t;
}

}  // namespace kiln::schedules
