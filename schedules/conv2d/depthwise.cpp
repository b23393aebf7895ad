// conv2d.depthwise: groups == C == O (channel multiplier 1): vectorized over the channel
// block, register-blocked along W, epilogue fused (memory-bound). Its zero-padded input is
// copied whole or per band of output rows (knob pad_rows, blocked.h). The blocked layout and
// what it shares with conv2d.nchwc and conv2d.1x1: direct.h; channel multipliers k > 1 are
// conv2d.depthwise_mult (depthwise_mult.h).
#include "schedules/conv2d/templates.h"

#include <algorithm>
#include <vector>

#include "compiler/base/error.h"
#include "schedules/conv2d/direct.h"

namespace kiln::schedules {

using ir::DataType;
using ir::Expr;
using ir::IterVar;
using ir::Var;

Values pack_depthwise_weight(const Values& wv, const Conv2dParams& p, int64_t bn) {
  const int64_t cb = ceil_div(p.c, bn);
  Values out(static_cast<size_t>(cb * p.kh * p.kw * bn), 0.0f);
  for (int64_t c = 0; c < p.c; ++c)
    for (int64_t k = 0; k < p.kh * p.kw; ++k)
      out[((c / bn) * p.kh * p.kw + k) * bn + c % bn] = wv[c * p.kh * p.kw + k];
  return out;
}

namespace {

class Conv2dDepthwise : public DirectConv2dTemplate {
 public:
  std::string name() const override { return "conv2d.depthwise"; }
  static bool is_depthwise(const Conv2dParams& p) {
    return p.groups == p.c && p.o == p.c;
  }
  bool applies(const Workload& w, const Target&) const override {
    return w.op == "conv2d" && is_depthwise(conv2d_params(w));
  }
  // The type the taps sum in: f16 where the CPU multiplies f16 (AArch64 +fullfp16: `fmla .8h`,
  // twice f32's lanes), else f32. A depthwise tap sums only KH x KW products (9 for 3x3, 49
  // for 7x7), within the 64 that f16 blocks are held to (f16_partial_sums.h).
  static DataType acc_type(const Workload& w, const Target& t) {
    return w.dtype == DataType::f16() && t.is_aarch64() && t.has("fullfp16") ? DataType::f16()
                                                                             : DataType::f32();
  }
  static Conv2dParams params(const Workload& w) {
    Conv2dParams p = conv2d_params(w);
    user_check(is_depthwise(p)) << "conv2d.depthwise needs groups == C == O (channel "
                                << "multiplier 1), got " << w.str() << " (use conv2d.nchwc)";
    return p;
  }

  ConfigSpace space(const Workload& w, const Target& t) const override {
    Conv2dParams p = params(w);
    const int64_t lanes = t.lanes(acc_type(w, t));
    ConfigSpace cs;
    cs.define_knob("c_bn", oc_bn_choices(p.c, lanes));
    cs.define_knob("reg_n", reg_n_choices(p.out_w()));
    cs.define_knob("unroll_kw", {0, 1});
    cs.define_knob("unroll_kh", unroll_kh_choices(p), 0);  // added later: 0 is the old schedule
    define_tile_loop_knobs(cs);
    define_pad_knob(cs, p);
    return cs;
  }

  Config fallback(const Workload& w, const Target& t) const override {
    Conv2dParams p = params(w);
    const int64_t lanes = t.lanes(acc_type(w, t));
    // Memory-bound: one or two vectors of channels, a W tile long enough that each input
    // vector loaded serves several taps from registers.
    int64_t vecs = std::min<int64_t>(t.is_x86() && lanes >= 16 ? 1 : 2, ceil_div(p.c, lanes));
    int64_t reg_n = pick_reg_n(p.out_w(), 8);
    Config cfg({{"c_bn", vecs * lanes},
                   {"reg_n", reg_n},
                   {"unroll_kw", 1},
                   {"unroll_kh", 0},
                   {"oc_inner", 0},
                   {"parallel", double(p.n * p.c * p.out_h() * p.out_w()) > 2e4 ? 1 : 0}});
    // The padded copy per band of rows, the band's input within the L2 (96 KiB measured
    // best of 16-96 on MobileNetV2's layers): the input is read once (see define_pad_knob).
    if (p.ph > 0 || p.pw > 0) cfg.set("pad_rows", pick_pad_rows(p, vecs * lanes, 4, 96 << 10));
    return cfg;
  }

 protected:
  ScheduledKernel schedule(const Workload& w, const Target& t,
                           const Config& cfg) const override {
    Conv2dParams p = params(w);
    const DataType acc_t = acc_type(w, t);
    const int64_t lanes = t.lanes(acc_t), bn = cfg["c_bn"], cb = ceil_div(p.c, bn);
    const int64_t oh = p.out_h(), ow = p.out_w();

    te::Tensor data = te::placeholder({p.n, cb, p.h, p.w, bn}, w.dtype, "data");
    te::Tensor weight = te::placeholder({cb, p.kh, p.kw, bn}, w.dtype, "weight.packed");
    te::Tensor padded = pad_blocked(data, p, w.dtype);
    EpilogueTensors ep = make_epilogue_placeholders(w, cb * bn, {p.n, cb, oh, ow, bn});
    IterVar ry = te::reduce_axis(p.kh, "ry"), rx = te::reduce_axis(p.kw, "rx");
    te::Tensor acc = te::compute(
        {p.n, cb, oh, ow, bn},
        [&](const std::vector<Var>& v) -> Expr {
          Expr in = padded(v[0], v[1], v[2] * p.sh + ry->var * p.dh, v[3] * p.sw + rx->var * p.dw, v[4]);
          Expr wt = weight(v[1], ry, rx, v[4]);
          return te::sum(ir::make_cast(acc_t, in) * ir::make_cast(acc_t, wt), {ry, rx});
        },
        "conv.acc");
    // The epilogue reads f32 (an f16 sum widens as it is read).
    te::Tensor acc32 = acc;
    if (acc_t != DataType::f32())
      acc32 = te::compute(
          {p.n, cb, oh, ow, bn},
          [&](const std::vector<Var>& v) -> Expr {
            return ir::make_cast(DataType::f32(), acc(std::vector<Expr>(v.begin(), v.end())));
          },
          "conv.acc32");
    te::Tensor out = blocked_epilogue(w, ep, acc32, bn);

    te::Schedule sch({out});
    if (!(acc32 == acc)) sch[acc32].compute_inline();
    const int64_t pad_rows = padded == data ? 0 : cfg["pad_rows"];
    TileKnobs k{cfg["reg_n"], lanes, cfg["parallel"], cfg["oc_inner"], cfg["unroll_kw"] != 0,
                cfg["unroll_kh"] != 0, 1, ry, rx, std::max<int64_t>(pad_rows, 1)};
    IterVar band = schedule_register_tile(sch, out, acc, k, {ry, rx});
    if (!(padded == data))
      schedule_pad_stage(sch, padded, out, band, pad_rows, k, p);

    return finish_blocked(
        w, p, std::move(sch), data, weight, ep, out, bn, bn,
        [p, bn](const Values& v) { return pack_depthwise_weight(v, p, bn); },
        cb * p.kh * p.kw * bn);
  }
};

}  // namespace

const OpTemplate& conv2d_depthwise_template() {
  static const Conv2dDepthwise t;
  return t;
}

}  // namespace kiln::schedules
