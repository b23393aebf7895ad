#include "schedules/conv2d/int8.h"

#include "compiler/base/error.h"
#include "compiler/ir/op.h"
#include "schedules/conv2d/blocked.h"
#include "schedules/conv2d/int8_base.h"
#include "schedules/conv2d/lowp.h"
#include "schedules/requantize.h"

namespace kiln::schedules {

using ir::DataType;
using ir::Expr;
using ir::IterVar;
using ir::Var;

namespace {

class Conv2dInt8 final : public Conv2dInt8Base {
 public:
  std::string name() const override { return "conv2d.int8"; }

  bool applies(const Workload& w, const Target& t) const override {
    return is_int8_conv(w) && (t.is_x86() || t.is_aarch64());
  }

  ConfigSpace space(const Workload& w, const Target& t) const override {
    const Conv2dParams p = conv2d_params(w);
    return tile_space(p, ic_bn_choices(p.c, true), pair_dot_i16_lanes(t));
  }

  Config fallback(const Workload& w, const Target& t) const override {
    const int64_t lanes = pair_dot_i16_lanes(t);
    const Conv2dParams p = conv2d_params(w);
    // Accumulators within the register file with the weight vectors, the broadcast pair
    // and (without VNNI) the product: AVX2 2 ymm x 6 pixels of 16; AVX-512 2 zmm x 12 of
    // 32; NEON 4 q x 6 of 32.
    const int64_t icb = pick_ic_bn(p.c, 32, true), pairs = icb / 2;
    return tile_fallback(p, icb, pairs >= 4 ? 4 : (pairs >= 2 ? 2 : 1), lanes, lanes == 4 ? 4 : 2,
                         lanes == 8 ? 12 : 24);
  }

 protected:
  ScheduledKernel schedule(const Workload& w, const Target& t, const Config& cfg) const override {
    const Conv2dParams p = conv2d_params(w);
    const Requantize r = requantize_params(w);
    const bool with_bias = w.has_epilogue("bias");
    const DataType i16 = DataType::i16(), i32 = DataType::i32();
    const int64_t lanes = pair_dot_i16_lanes(t);
    const int64_t icb = cfg["ic_bn"], ocb = cfg["oc_bn"], reg_n = cfg["reg_n"];
    const int64_t cb = ceil_div(p.c, icb), ob = ceil_div(p.o, ocb), pairs = icb / 2;
    const int64_t oh = p.out_h(), ow = p.out_w(), owp = ceil_div(ow, reg_n) * reg_n;

    te::Tensor data = te::placeholder({p.n, cb, p.h, p.w, icb}, w.dtype, "data");
    te::Tensor weight = te::placeholder({ob, cb, p.kh, p.kw, pairs, ocb * 2}, i16, "weight.vnni");
    te::Tensor bias = with_bias ? te::placeholder({ob * ocb}, i32, "bias") : te::Tensor();
    te::Tensor scale =
        r.requantize ? te::placeholder({ob * ocb}, DataType::f32(), "scale") : te::Tensor();
    // Padded and widened once per call: data - a_zero in i16, 0 in the padding (which holds
    // the zero point, the quantized 0.0).
    te::Tensor wide = moved_data(p, data, i16, -r.a_zero, 0, "data.i16");
    const PairConvSums sums = pair_conv_sums(p, wide, weight, ob, ocb, owp, i32);
    const te::Tensor& acc = sums.acc;
    const DataType ot = int8_output_type(w);
    te::Tensor out = te::compute(
        {p.n, ob, oh, ow, ocb},
        [&](const std::vector<Var>& v) -> Expr {
          Expr channel = v[1] * ocb + v[4];
          Expr sum = acc(std::vector<Expr>(v.begin(), v.end()));
          if (with_bias) sum = sum + bias(channel);
          return requantize_expr(r, ot, sum, r.requantize ? scale(channel) : Expr());
        },
        "conv");

    te::Schedule sch({out});
    schedule_copy_stage(sch, wide, cfg["parallel"] != 0);
    const IterVar rx = sums.reduce[2], rp = sums.reduce[3];
    TileKnobs k{reg_n, lanes, cfg["parallel"], cfg["oc_inner"], cfg["unroll_kw"] != 0, false, 1,
                {},    rx};
    schedule_register_tile(sch, out, acc, k, sums.reduce);
    PairDotFn dot = [t](Expr a, Expr x, Expr y) {
      return pair_dot_i16(std::move(a), std::move(x), std::move(y), t);
    };
    sch[acc].tensorize(
        rp, conv_pair_dot_tile(p, reg_n, ocb / lanes, lanes, pairs, cfg["k_unroll"], ow, i16, dot));

    return finish(
        w, std::move(sch), {data, weight, bias, scale, out}, icb, ocb,
        [p, icb, ocb](const Values& v) { return pack_conv_weight_vnni(v, p, icb, ocb); },
        ob * cb * p.kh * p.kw * pairs * ocb * 2);
  }
};

}  // namespace

const OpTemplate& conv2d_int8_template() {
  static const Conv2dInt8 t;
  return t;
}

}  // namespace kiln::schedules
