// conv2d.depthwise_mult (see depthwise_mult.h).
#include "schedules/conv2d/depthwise_mult.h"

#include <algorithm>

#include "compiler/base/error.h"
#include "schedules/conv2d/blocked.h"
#include "schedules/conv2d/common.h"
#include "schedules/epilogue.h"

namespace kiln::schedules {

using ir::DataType;
using ir::Expr;
using ir::IterVar;
using ir::Var;

namespace {

// [O, 1, KH, KW] -> [O/ocb][KH][KW][ocb], zero-padded past O.
Values pack_multiplier_weight(const Values& wv, const Conv2dParams& p, int64_t ocb) {
  const int64_t ob = ceil_div(p.o, ocb), taps = p.kh * p.kw;
  Values out(static_cast<size_t>(ob * taps * ocb), 0.0f);
  for (int64_t o = 0; o < p.o; ++o)
    for (int64_t k = 0; k < taps; ++k)
      out[((o / ocb) * taps + k) * ocb + o % ocb] = wv[o * taps + k];
  return out;
}

class Conv2dDepthwiseMult final : public Conv2dTemplate {
 public:
  std::string name() const override { return "conv2d.depthwise_mult"; }
  bool applies(const Workload& w, const Target&) const override {
    return is_depthwise_multiplier(w);
  }

  ConfigSpace space(const Workload& w, const Target& t) const override {
    Conv2dParams p = params(w);
    ConfigSpace cs;
    cs.define_knob("ic_bn", ic_bn_choices(p.c));
    cs.define_knob("oc_bn", oc_bn_choices(p.o, t.lanes(DataType::f32())));
    cs.define_knob("reg_n", reg_n_choices(p.out_w()));
    cs.define_knob("unroll_kw", {0, 1});
    cs.define_knob("unroll_kh", unroll_kh_choices(p));
    define_tile_loop_knobs(cs);
    return cs;
  }

  Config fallback(const Workload& w, const Target& t) const override {
    Conv2dParams p = params(w);
    const int64_t lanes = t.lanes(DataType::f32()), k = p.o / p.c;
    // Memory-bound like conv2d.depthwise: one or two vectors of output channels, a W tile
    // that reuses each input vector over several taps.
    const int64_t vecs = std::min<int64_t>(t.is_x86() && lanes >= 16 ? 1 : 2, ceil_div(p.o, lanes));
    const int64_t ocb = vecs * lanes;
    // The input block one output block reads (ocb / k channels), where the space offers it.
    std::vector<int64_t> ics = ic_bn_choices(p.c);
    int64_t icb = pick_ic_bn(p.c, lanes);
    if (ocb % k == 0 && std::find(ics.begin(), ics.end(), ocb / k) != ics.end()) icb = ocb / k;
    return Config({{"ic_bn", icb},
                   {"oc_bn", ocb},
                   {"reg_n", pick_reg_n(p.out_w(), 8)},
                   {"unroll_kw", 1},
                   {"unroll_kh", 0},
                   {"oc_inner", 0},
                   {"parallel", double(p.n * p.o * p.out_h() * p.out_w()) > 2e4 ? 1 : 0}});
  }

 protected:
  static Conv2dParams params(const Workload& w) {
    user_check(is_depthwise_multiplier(w))
        << "conv2d.depthwise_mult needs groups == C and O a multiple k > 1 of C, got " << w.str()
        << " (use conv2d.depthwise for O == C, conv2d.nchwc otherwise)";
    return conv2d_params(w);
  }

  ScheduledKernel schedule(const Workload& w, const Target& t, const Config& cfg) const override {
    const Conv2dParams p = params(w);
    const DataType f32 = DataType::f32();
    const int64_t lanes = t.lanes(f32), icb = cfg["ic_bn"], ocb = cfg["oc_bn"];
    const int64_t cb = ceil_div(p.c, icb), ob = ceil_div(p.o, ocb), k = p.o / p.c;
    const int64_t oh = p.out_h(), ow = p.out_w();

    te::Tensor data = te::placeholder({p.n, cb, p.h, p.w, icb}, w.dtype, "data");
    te::Tensor weight = te::placeholder({ob, p.kh, p.kw, ocb}, w.dtype, "weight.packed");
    te::Tensor padded = pad_blocked(data, p, w.dtype);
    EpilogueTensors ep = make_epilogue_placeholders(w, ob * ocb, {p.n, ob, oh, ow, ocb});
    IterVar ry = te::reduce_axis(p.kh, "ry"), rx = te::reduce_axis(p.kw, "rx");
    te::Tensor acc = te::compute(
        {p.n, ob, oh, ow, ocb},
        [&](const std::vector<Var>& v) -> Expr {
          // Output channels past O (the last block's padding) read input channel C-1; their
          // weights are zero and they are never stored.
          Expr c = ir::min((v[1] * ocb + v[4]) / k, Expr(p.c - 1));
          Expr in = padded(v[0], c / icb, v[2] * p.sh + ry->var * p.dh,
                           v[3] * p.sw + rx->var * p.dw, c % icb);
          Expr wt = weight(v[1], ry, rx, v[4]);
          return te::sum(ir::make_cast(f32, in) * ir::make_cast(f32, wt), {ry, rx});
        },
        "conv.acc");
    te::Tensor out = te::compute(
        {p.n, ob, oh, ow, ocb},
        [&](const std::vector<Var>& v) -> Expr {
          std::vector<Expr> idx(v.begin(), v.end());
          return ir::make_cast(w.dtype, apply_epilogue(w, ep, acc(idx), idx, v[1] * ocb + v[4]));
        },
        "conv");

    te::Schedule sch({out});
    if (!(padded == data)) schedule_copy_stage(sch, padded, cfg["parallel"] != 0);
    TileKnobs knobs{cfg["reg_n"], lanes, cfg["parallel"], cfg["oc_inner"], cfg["unroll_kw"] != 0,
                    cfg["unroll_kh"] != 0, 1, ry, rx};
    schedule_register_tile(sch, out, acc, knobs, {ry, rx});

    return {std::move(sch), with_epilogue_args({data, weight}, ep, out),
            blocked_conv_args(
                inputs(w), output(w), p, icb, ocb,
                [p, ocb](const Values& v) { return pack_multiplier_weight(v, p, ocb); },
                ob * p.kh * p.kw * ocb),
            p.flops()};
  }
};

}  // namespace

const OpTemplate& conv2d_depthwise_mult_template() {
  static const Conv2dDepthwiseMult t;
  return t;
}

bool is_depthwise_multiplier(const Workload& w) {
  if (w.op != "conv2d") return false;
  Conv2dParams p = conv2d_params(w);
  return p.groups == p.c && p.o > p.c && p.o % p.c == 0;
}

}  // namespace kiln::schedules
