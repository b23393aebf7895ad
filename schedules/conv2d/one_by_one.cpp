// conv2d.1x1: 1x1, pad 0, groups 1, any stride: a GEMM over output pixels (flattened H*W;
// strided inputs subsampled once first) with the dense register tile. Small planes take
// pixel blocks, K chunks and weight streams (pixel_blocks.h). The blocked layout and what it
// shares with conv2d.nchwc and conv2d.depthwise: direct.h.
#include "schedules/conv2d/templates.h"

#include <algorithm>
#include <numeric>
#include <vector>

#include "compiler/base/error.h"
#include "schedules/conv2d/direct.h"
#include "schedules/conv2d/pixel_blocks.h"
#include "schedules/parallel_rule.h"

namespace kiln::schedules {

using ir::DataType;
using ir::Expr;
using ir::IterVar;
using ir::Var;

namespace {

class Conv2d1x1 : public DirectConv2dTemplate {
 public:
  std::string name() const override { return "conv2d.1x1"; }
  static bool is_1x1(const Conv2dParams& p) {
    return p.kh == 1 && p.kw == 1 && p.ph == 0 && p.pw == 0 && p.groups == 1;
  }
  bool applies(const Workload& w, const Target&) const override {
    return w.op == "conv2d" && is_1x1(conv2d_params(w));
  }
  static Conv2dParams params(const Workload& w) {
    Conv2dParams p = conv2d_params(w);
    user_check(is_1x1(p)) << "conv2d.1x1 needs a 1x1 kernel, no padding and groups == 1, got "
                          << w.str() << " (use conv2d.nchwc)";
    return p;
  }

  ConfigSpace space(const Workload& w, const Target& t) const override {
    Conv2dParams p = params(w);
    const int64_t lanes = t.lanes(DataType::f32());
    ConfigSpace cs;
    cs.define_knob("ic_bn", ic_bn_choices(p.c));
    cs.define_knob("oc_bn", oc_bn_choices(p.o, lanes));
    cs.define_knob("reg_n", reg_n_choices(p.out_h() * p.out_w()));
    cs.define_knob("k_unroll", {1, 2, 4, 8});
    define_tile_loop_knobs(cs);
    // Added later (legacy: one tile per accumulator block, no K chunks): see
    // pixel_blocks.h.
    cs.define_knob("block_tiles", block_tiles_choices(p.out_h() * p.out_w()), 1);
    cs.define_knob("kc", kc_choices(p.c), 0);
    cs.define_knob("weight_streams", {1, 2, 4}, 1);
    return cs;
  }

  Config fallback(const Workload& w, const Target& t) const override {
    Conv2dParams p = params(w);
    const int64_t lanes = t.lanes(DataType::f32());
    const int64_t budget = vector_registers(t) * 3 / 4;
    const int64_t pixels = p.out_h() * p.out_w();
    const bool small = is_small_1x1(p);  // few pixels per weight: streaming decides
    // Like dense.packed: 3-4 vectors of output channels, as many pixels as fit. Small
    // planes take 2 vectors (the block their depthwise neighbours use), the weight panel in
    // two streams, K chunks and blocks of ~49 pixels (pixel_blocks.h): measured in
    // MobileNetV2 at 1 thread, x86-avx512, 7x7 and 14x14 layers 5-30% faster than without.
    int64_t pref = small ? 2 : t.is_x86() ? (lanes >= 16 ? 4 : 2) : 4;
    int64_t vecs = pick_oc_vecs(pref, p.o, lanes);
    int64_t reg_n = pick_reg_n(pixels, std::min<int64_t>(budget / vecs, 16));
    return Config({{"ic_bn", pick_ic_bn(p.c, small ? 32 : 16)},
                   {"oc_bn", vecs * lanes},
                   {"reg_n", reg_n},
                   {"k_unroll", 1},
                   {"oc_inner", small ? 0 : pick_oc_inner(p, vecs * lanes, w.dtype.bytes())},
                   {"parallel", worth_parallel(p.flops()) ? 1 : 0},
                   {"block_tiles", small ? pick_block_tiles(pixels, reg_n) : 1},
                   {"kc", small && p.c > 128 ? 128 : 0},
                   {"weight_streams", small ? 2 : 1}});
  }

 protected:
  ScheduledKernel schedule(const Workload& w, const Target& t,
                           const Config& cfg) const override {
    Conv2dParams p = params(w);
    const DataType f32 = DataType::f32();
    const int64_t lanes = t.lanes(f32), icb = cfg["ic_bn"], ocb = cfg["oc_bn"];
    const int64_t cb = ceil_div(p.c, icb), ob = ceil_div(p.o, ocb);
    const int64_t oh = p.out_h(), ow = p.out_w(), pix = oh * ow;
    const bool strided = p.sh != 1 || p.sw != 1;

    // Pixels are one axis: a stride-1 input is already [N, CB, H*W, icb] in memory; a
    // strided one is subsampled once into that form (a pass over output-sized data).
    te::Tensor data = strided ? te::placeholder({p.n, cb, p.h, p.w, icb}, w.dtype, "data")
                              : te::placeholder({p.n, cb, 1, pix, icb}, w.dtype, "data");
    te::Tensor src = data;
    if (strided) {
      src = te::compute(
          {p.n, cb, 1, pix, icb},
          [&](const std::vector<Var>& v) -> Expr {
            return data(v[0], v[1], v[3] / ow * p.sh, v[3] % ow * p.sw, v[4]);
          },
          "data.strided");
    }
    // The block's vectors of output channels split into `streams` separate weight streams
    // (pixel_blocks.h: more prefetch streams in flight from L3).
    const int64_t streams = weight_streams(cfg, ocb, lanes), sw = ocb / streams;
    te::Tensor weight =
        te::placeholder({ob, streams, cb, icb, sw}, w.dtype, "weight.packed");
    EpilogueTensors ep = make_epilogue_placeholders(w, ob * ocb, {p.n, ob, 1, pix, ocb});
    IterVar rco = te::reduce_axis(cb, "rco"), rci = te::reduce_axis(icb, "rci");
    te::Tensor acc = te::compute(
        {p.n, ob, 1, pix, ocb},
        [&](const std::vector<Var>& v) -> Expr {
          Expr in = src(v[0], rco, v[2], v[3], rci);
          Expr wt = weight(v[1], v[4] / sw, rco, rci, v[4] % sw);
          return te::sum(ir::make_cast(f32, in) * ir::make_cast(f32, wt), {rco, rci});
        },
        "conv.acc");
    te::Tensor out = blocked_epilogue(w, ep, acc, ocb);

    te::Schedule sch({out});
    if (strided) schedule_copy_stage(sch, src, cfg["parallel"] != 0);
    int64_t ku = std::gcd(cfg["k_unroll"], icb);
    PixelBlockKnobs k{{cfg["reg_n"], lanes, cfg["parallel"], cfg["oc_inner"], false, false, ku, {}, {}},
                      cfg.has("block_tiles") ? cfg["block_tiles"] : 1,
                      cfg.has("kc") && cfg["kc"] > 0 ? std::max<int64_t>(1, cfg["kc"] / icb) : 0};
    schedule_pixel_blocks(sch, out, acc, k, rco, rci);

    return finish_blocked(
        w, p, std::move(sch), data, weight, ep, out, icb, ocb,
        [p, icb, ocb, streams](const Values& v) {
          return split_weight_streams(pack_conv_weight(v, p, icb, ocb, all_channels(p, ocb)),
                                      ceil_div(p.o, ocb), ceil_div(p.c, icb) * icb, ocb, streams);
        },
        ob * cb * icb * ocb);
  }
};

}  // namespace

const OpTemplate& conv2d_1x1_template() {
  static const Conv2d1x1 t;
  return t;
}

}  // namespace kiln::schedules
