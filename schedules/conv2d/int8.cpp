#include "schedules/conv2d/int8.h"

#include <algorithm>

#include "compiler/base/error.h"
#include "compiler/ir/op.h"
#include "schedules/conv2d/blocked.h"
#include "schedules/conv2d/lowp.h"
#include "schedules/layout.h"
#include "schedules/parallel_rule.h"
#include "schedules/requantize.h"

namespace kiln::schedules {

using ir::DataType;
using ir::Expr;
using ir::IterVar;
using ir::Var;

namespace {

constexpr int64_t kWidestTile = 14;

class Conv2dInt8 final : public OpTemplate {
 public:
  std::string name() const override { return "conv2d.int8"; }
  std::string op() const override { return "conv2d"; }
  std::vector<DataType> dtypes() const override { return {DataType::u8(), DataType::i8()}; }
  std::vector<std::string> epilogues() const override { return {"bias"}; }
  std::vector<std::string> value_params() const override { return requantize_value_params(); }

  bool applies(const Workload& w, const Target& t) const override {
    return w.op == "conv2d" && (w.dtype == DataType::u8() || w.dtype == DataType::i8()) &&
           (t.is_x86() || t.is_aarch64()) && conv2d_params(w).groups == 1;
  }

  std::vector<TensorSpec> inputs(const Workload& w) const override {
    const Conv2dParams p = conv2d_params(w);
    std::vector<TensorSpec> in = {{"data", {p.n, p.c, p.h, p.w}},
                                  {"weight", {p.o, p.c, p.kh, p.kw}}};
    if (w.has_epilogue("bias")) in.push_back({"bias", {p.o}});
    if (int8_output_type(w) != DataType::i32()) in.push_back({"scale", {p.o}});
    return in;
  }
  TensorSpec output(const Workload& w) const override {
    const Conv2dParams p = conv2d_params(w);
    return {"out", {p.n, p.o, p.out_h(), p.out_w()}};
  }

  // Exact: integer sums in double (padding reads a_zero, so adds nothing), then
  // requantize_reference.
  Values reference(const Workload& w, const std::vector<Values>& in) const override {
    const Conv2dParams p = conv2d_params(w);
    const Requantize r = requantize_params(w);
    const Values &data = in.at(0), &weight = in.at(1);
    size_t next = 2;
    const Values* bias = w.has_epilogue("bias") ? &in.at(next++) : nullptr;
    const Values* scale = r.requantize ? &in.at(next++) : nullptr;
    const int64_t oh = p.out_h(), ow = p.out_w();
    Values out(static_cast<size_t>(p.n * p.o * oh * ow));
    for (int64_t n = 0; n < p.n; ++n)
      for (int64_t o = 0; o < p.o; ++o)
        for (int64_t y = 0; y < oh; ++y)
          for (int64_t x = 0; x < ow; ++x) {
            double sum = bias ? double((*bias)[o]) : 0.0;
            for (int64_t c = 0; c < p.c; ++c)
              for (int64_t ky = 0; ky < p.kh; ++ky)
                for (int64_t kx = 0; kx < p.kw; ++kx) {
                  const int64_t iy = y * p.sh + ky * p.dh - p.ph, ix = x * p.sw + kx * p.dw - p.pw;
                  if (iy < 0 || iy >= p.h || ix < 0 || ix >= p.w) continue;
                  const double a = data[((n * p.c + c) * p.h + iy) * p.w + ix] - double(r.a_zero);
                  sum += a * weight[((o * p.c + c) * p.kh + ky) * p.kw + kx];
                }
            out[((n * p.o + o) * oh + y) * ow + x] =
                requantize_reference(r, sum, scale ? (*scale)[o] : 1.0f);
          }
    return out;
  }

  ConfigSpace space(const Workload& w, const Target& t) const override {
    const Conv2dParams p = conv2d_params(w);
    ConfigSpace cs;
    cs.define_knob("ic_bn", ic_bn_choices(p.c, true));
    cs.define_knob("oc_bn", oc_bn_choices(p.o, pair_dot_i16_lanes(t)));
    cs.define_knob("reg_n", reg_n_choices(p.out_w(), kWidestTile));
    cs.define_knob("unroll_kw", {0, 1});
    cs.define_knob("k_unroll", {1, 2, 4});  // channel pairs per iteration of the pair loop
    define_tile_loop_knobs(cs);
    return cs;
  }

  Config fallback(const Workload& w, const Target& t) const override {
    const Conv2dParams p = conv2d_params(w);
    const int64_t lanes = pair_dot_i16_lanes(t);
    // Accumulators within the register file with the weight vectors, the broadcast pair
    // and (without VNNI) the product: AVX2 2 ymm x 6 pixels of 16; AVX-512 2 zmm x 12 of
    // 32; NEON 4 q x 6 of 32.
    const int64_t max_vecs = lanes == 8 ? 2 : lanes == 16 ? 2 : 4;
    const int64_t max_acc = lanes == 8 ? 12 : 24;
    int64_t vecs = 1;
    for (int64_t oc_bn : oc_bn_choices(p.o, lanes))
      if (oc_bn / lanes <= max_vecs) vecs = std::max(vecs, oc_bn / lanes);
    const int64_t icb = pick_ic_bn(p.c, 32, true);
    return Config({{"ic_bn", icb},
                   {"oc_bn", lanes * vecs},
                   {"reg_n", pick_reg_n(p.out_w(), max_acc / vecs, kWidestTile)},
                   {"unroll_kw", p.kw <= 3 ? 1 : 0},
                   {"k_unroll", icb >= 8 ? 4 : (icb >= 4 ? 2 : 1)},
                   {"oc_inner", 0},
                   {"parallel", worth_parallel(p.flops()) ? 1 : 0}});
  }

 protected:
  void check(const Workload& w, const Target& t) const override {
    requantize_params(w);
    const Conv2dParams p = conv2d_params(w);
    user_check(p.groups == 1) << name() << ": groups must be 1, got " << p.groups;
    user_check(t.is_x86() || t.is_aarch64())
        << name() << ": target " << t.name << " is neither x86-64 nor AArch64";
  }

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
    te::Tensor wide = te::compute(
        {p.n, cb, p.h + 2 * p.ph, p.w + 2 * p.pw, icb},
        [&](const std::vector<Var>& v) -> Expr {
          Expr y = v[2], x = v[3];
          Expr inside = y >= p.ph && y < p.h + p.ph && x >= p.pw && x < p.w + p.pw;
          Expr yy = ir::max(ir::min(y - p.ph, Expr(p.h - 1)), Expr(0));
          Expr xx = ir::max(ir::min(x - p.pw, Expr(p.w - 1)), Expr(0));
          Expr v16 = ir::make_cast(i16, data(v[0], v[1], yy, xx, v[4])) -
                     ir::make_const(i16, double(r.a_zero));
          return ir::make_select(inside, v16, ir::make_zero(i16));
        },
        "data.i16");
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

    std::vector<te::Tensor> tensors = {data, weight};
    if (with_bias) tensors.push_back(bias);
    if (r.requantize) tensors.push_back(scale);
    tensors.push_back(out);
    std::vector<KernelArg> args = blocked_conv_args(
        inputs(w), output(w), p, icb, ocb,
        [p, icb, ocb](const Values& v) { return pack_conv_weight_vnni(v, p, icb, ocb); },
        ob * cb * p.kh * p.kw * pairs * ocb * 2);
    for (KernelArg& a : args) {
      if (a.logical.name == "weight") a.logical_dtype = DataType::i8();  // held as i16 pairs
      if (a.logical.name == "scale") {
        a.pack = [to = ob * ocb](const Values& v) { return pad_channels(v, to); };
        a.kernel_elements = ob * ocb;
      }
    }
    return {std::move(sch), std::move(tensors), std::move(args), p.flops()};
  }
};

}  // namespace

const OpTemplate& conv2d_int8_template() {
  static const Conv2dInt8 t;
  return t;
}

}  // namespace kiln::schedules
