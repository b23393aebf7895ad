#include <algorithm>

#include "compiler/base/error.h"
#include "compiler/ir/op.h"
#include "schedules/conv2d/blocked.h"
#include "schedules/conv2d/int8.h"
#include "schedules/conv2d/int8_base.h"
#include "schedules/conv2d/templates.h"

namespace kiln::schedules {

using ir::DataType;
using ir::Expr;
using ir::IterVar;
using ir::Var;

namespace {

// Taps whose sum of products (|a - zero| <= 255, |w| <= 128) stays below 2^24, where f32
// holds every integer exactly.
constexpr int64_t kExactF32Taps = (int64_t(1) << 24) / (255 * 128);

class Conv2dInt8Depthwise final : public Conv2dInt8Base {
 public:
  std::string name() const override { return "conv2d.int8.depthwise"; }
  bool depthwise() const override { return true; }

  bool applies(const Workload& w, const Target& t) const override {
    return is_int8_depthwise(w) && (t.is_x86() || t.is_aarch64());
  }

  ConfigSpace space(const Workload& w, const Target& t) const override {
    const Conv2dParams p = conv2d_params(w);
    ConfigSpace cs;
    cs.define_knob("c_bn", oc_bn_choices(p.c, t.lanes(DataType::f32())));
    cs.define_knob("reg_n", reg_n_choices(p.out_w()));
    cs.define_knob("unroll_kw", {0, 1});
    define_tile_loop_knobs(cs);
    define_pad_knob(cs, p);
    return cs;
  }

  Config fallback(const Workload& w, const Target& t) const override {
    const Conv2dParams p = conv2d_params(w);
    const int64_t lanes = t.lanes(DataType::f32());
    // As conv2d.depthwise: memory-bound, one or two vectors of channels, a W tile long
    // enough that each input vector serves several taps from registers.
    const int64_t vecs = std::min<int64_t>(t.is_x86() && lanes >= 16 ? 1 : 2, ceil_div(p.c, lanes));
    Config cfg({{"c_bn", vecs * lanes},
                {"reg_n", pick_reg_n(p.out_w(), 8)},
                {"unroll_kw", 1},
                {"oc_inner", 0},
                {"parallel", double(p.n * p.c * p.out_h() * p.out_w()) > 2e4 ? 1 : 0}});
    // The moved copy per band of rows within the L2, as conv2d.depthwise's padded copy.
    if (p.ph > 0 || p.pw > 0) cfg.set("pad_rows", pick_pad_rows(p, vecs * lanes, 4, 96 << 10));
    return cfg;
  }

 protected:
  ScheduledKernel schedule(const Workload& w, const Target& t, const Config& cfg) const override {
    const Conv2dParams p = conv2d_params(w);
    const Requantize r = requantize_params(w);
    const bool with_bias = w.has_epilogue("bias");
    const int64_t bn = cfg["c_bn"], cb = ceil_div(p.c, bn);
    const int64_t oh = p.out_h(), ow = p.out_w();
    // The sums in f32 where they stay exact (any real depthwise kernel: up to 513 taps), so
    // the tile is the f32 depthwise's FMAs; in int32 beyond.
    const DataType acc_t = p.kh * p.kw <= kExactF32Taps ? DataType::f32() : DataType::i32();
    const DataType i32 = DataType::i32();

    te::Tensor data = te::placeholder({p.n, cb, p.h, p.w, bn}, w.dtype, "data");
    te::Tensor weight = te::placeholder({cb, p.kh, p.kw, bn}, acc_t, "weight.packed");
    te::Tensor bias = with_bias ? te::placeholder({cb * bn}, i32, "bias") : te::Tensor();
    te::Tensor scale =
        r.requantize ? te::placeholder({cb * bn}, DataType::f32(), "scale") : te::Tensor();
    // The data minus its zero point in the sums' type, padded with 0 (the quantized 0.0):
    // per band of output rows (pad_rows), or once per call without padding.
    te::Tensor moved = moved_data(p, data, acc_t, -r.a_zero, 0, "data.moved");
    IterVar ry = te::reduce_axis(p.kh, "ry"), rx = te::reduce_axis(p.kw, "rx");
    te::Tensor acc = te::compute(
        {p.n, cb, oh, ow, bn},
        [&](const std::vector<Var>& v) -> Expr {
          Expr in =
              moved(v[0], v[1], v[2] * p.sh + ry->var * p.dh, v[3] * p.sw + rx->var * p.dw, v[4]);
          return te::sum(in * weight(v[1], ry, rx, v[4]), {ry, rx});
        },
        "conv.acc");
    const DataType ot = int8_output_type(w);
    te::Tensor out = te::compute(
        {p.n, cb, oh, ow, bn},
        [&](const std::vector<Var>& v) -> Expr {
          Expr channel = v[1] * bn + v[4];
          Expr sum = ir::make_cast(i32, acc(std::vector<Expr>(v.begin(), v.end())));
          if (with_bias) sum = sum + bias(channel);
          return requantize_expr(r, ot, sum, r.requantize ? scale(channel) : Expr());
        },
        "conv");

    te::Schedule sch({out});
    const int64_t pad_rows = cfg.has("pad_rows") ? cfg["pad_rows"] : 0;
    TileKnobs k{cfg["reg_n"],
                t.lanes(DataType::f32()),
                cfg["parallel"],
                cfg["oc_inner"],
                cfg["unroll_kw"] != 0,
                false,
                1,
                ry,
                rx,
                std::max<int64_t>(pad_rows, 1)};
    IterVar band = schedule_register_tile(sch, out, acc, k, {ry, rx});
    schedule_pad_stage(sch, moved, out, band, pad_rows, k, p);

    return finish(
        w, std::move(sch), {data, weight, bias, scale, out}, bn, bn,
        [p, bn](const Values& v) { return pack_depthwise_weight(v, p, bn); },
        cb * p.kh * p.kw * bn);
  }
};

}  // namespace

const OpTemplate& conv2d_int8_depthwise_template() {
  static const Conv2dInt8Depthwise t;
  return t;
}

}  // namespace kiln::schedules
