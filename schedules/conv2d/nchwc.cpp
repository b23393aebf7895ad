// conv2d.nchwc, the general case (TVM's x86 conv2d): a reg_n x oc_bn register tile over all
// input channels and taps; spatial padding is a zero-padded copy of the input made once, so
// the inner loop has no conditionals; groups > 1 through block-diagonal packed weights
// (exact, but costs groups x the FLOPs: right for groups 2-4, depthwise has its own). Small
// output planes with many input channels can take the plane tile instead of the row tile
// (knob ic_chunk, plane_tile.h). The blocked layout and what it shares with conv2d.1x1 and
// conv2d.depthwise: direct.h.
#include "schedules/conv2d/templates.h"

#include <algorithm>
#include <numeric>
#include <vector>

#include "schedules/conv2d/direct.h"
#include "schedules/conv2d/plane_tile.h"
#include "schedules/parallel_rule.h"

namespace kiln::schedules {

using ir::DataType;
using ir::Expr;
using ir::IterVar;
using ir::Var;

namespace {

// Whether the fallback takes the plane tile (one channel block at a time for the whole
// plane, plane_tile.h): where the row tile would stream an output block's whole
// weight panel again for every row (several rows, many input channels) and the plane's
// accumulators (oh x ow x ocb) and one channel block of weights (KH x KW x icb x ocb) both
// fit comfortably in the target's L1 (ResNet's 7x7 and 14x14 3x3 layers with 32 KiB: the
// accumulators up to the L1, the weights up to 1.25 times it, as measured there).
bool plane_tile_pays(const Conv2dParams& p, int64_t icb, int64_t ocb, const Target& t) {
  const int64_t l1_bytes = int64_t{t.l1d_kib} * 1024;
  const int64_t acc_bytes = p.out_h() * p.out_w() * ocb * 4;
  const int64_t weight_block_bytes = p.kh * p.kw * icb * ocb * 4;
  return p.out_h() > 1 && p.kh * p.kw > 1 && p.c >= 128 && acc_bytes <= l1_bytes &&
         weight_block_bytes <= l1_bytes * 5 / 4;
}

class Conv2dNchwc : public DirectConv2dTemplate {
 public:
  std::string name() const override { return "conv2d.nchwc"; }
  bool applies(const Workload& w, const Target&) const override {
    return w.op == "conv2d";
  }

  ConfigSpace space(const Workload& w, const Target& t) const override {
    Conv2dParams p = conv2d_params(w);
    const int64_t lanes = t.lanes(DataType::f32());
    ConfigSpace cs;
    cs.define_knob("ic_bn", ic_bn_choices(p.c));
    cs.define_knob("oc_bn", oc_bn_choices(p.o, lanes));
    cs.define_knob("reg_n", reg_n_choices(p.out_w()));
    cs.define_knob("unroll_kw", {0, 1});
    // Knobs with a legacy default came later: an older log's config gets the schedule it had.
    cs.define_knob("unroll_kh", unroll_kh_choices(p), 0);
    cs.define_knob("k_unroll", {1, 2, 4}, 1);  // input channels of a block per unrolled step
    // 0: rco, ry, rx, rci (a block's channels innermost); 1: ry, rx, rco, rci (one tap over
    // all channel blocks: the weights stream in order, the input rows are revisited).
    cs.define_knob("reduce_order", {0, 1}, 0);
    // 0: the row tile (schedule_register_tile); c > 0: the plane tile (plane_tile.h),
    // the reduction walking c input-channel blocks at a time outside the plane's rows.
    cs.define_knob("ic_chunk", {0, 1, 2, 4}, 0);
    define_tile_loop_knobs(cs);
    return cs;
  }

  Config fallback(const Workload& w, const Target& t) const override {
    Conv2dParams p = conv2d_params(w);
    const int64_t lanes = t.lanes(DataType::f32());
    // Accumulators take 3/4 of the vector registers: 24 of 32 zmm / v, 12 of 16 ymm;
    // the rest hold weight vectors and the broadcast input.
    const int64_t budget = vector_registers(t) * 3 / 4;
    int64_t pref = t.is_x86() ? 2 : 4;  // 32 channels on AVX-512, 16 on AVX2 and NEON
    int64_t vecs = pick_oc_vecs(pref, p.o, lanes);
    int64_t part_c = p.c;  // the input channels an output block reads (channel_parts)
    if (p.groups > 1) {
      // Blocks that fit the groups: the widest that divides a group's outputs, else one
      // vector holding whole groups.
      const int64_t og = p.o / p.groups;
      while (vecs > 1 && og % (vecs * lanes) != 0) vecs /= 2;
      part_c = channel_parts(p, 1, vecs * lanes).channels;
    }
    int64_t reg_n = pick_reg_n(p.out_w(), std::min<int64_t>(budget / vecs, 16));
    int64_t icb = pick_ic_bn(part_c, vecs * lanes);
    // An image of 1-3 channels (a stem's input) stays in NCHW, blocks of one channel: no
    // conversion before the conv, and its padded copy runs in vectors along W.
    if (p.groups == 1 && p.c < 4) icb = 1;
    return Config({{"ic_bn", icb},
                   {"oc_bn", vecs * lanes},
                   {"reg_n", reg_n},
                   {"unroll_kw", p.kw <= 3 ? 1 : 0},
                   {"unroll_kh", 0},
                   {"k_unroll", 1},
                   {"reduce_order", 0},
                   {"ic_chunk", plane_tile_pays(p, icb, vecs * lanes, t) ? 1 : 0},
                   {"oc_inner", pick_oc_inner(p, vecs * lanes, w.dtype.bytes())},
                   {"parallel", worth_parallel(p.flops()) ? 1 : 0}});
  }

 protected:
  ScheduledKernel schedule(const Workload& w, const Target& t,
                           const Config& cfg) const override {
    Conv2dParams p = conv2d_params(w);
    const DataType f32 = DataType::f32();
    const int64_t lanes = t.lanes(f32), icb = cfg["ic_bn"], ocb = cfg["oc_bn"];
    const int64_t cb = ceil_div(p.c, icb), ob = ceil_div(p.o, ocb);
    const int64_t oh = p.out_h(), ow = p.out_w();
    // A grouped conv's output block reads its part's input blocks only (channel_parts).
    const ChannelParts parts = channel_parts(p, icb, ocb);
    const int64_t part_cb = part_blocks(parts, icb);
    // A part narrower than an input block (RegNet's groups of 16 channels in the blocks of 32
    // the layer before writes) reduces over its own channels of the block only: the weights
    // are packed `reduced` channels deep, not icb with the other groups' zeros.
    const bool within_block = parts.count > 1 && parts.channels < icb;
    const int64_t reduced = within_block ? parts.channels : icb;

    te::Tensor data = te::placeholder({p.n, cb, p.h, p.w, icb}, w.dtype, "data");
    te::Tensor weight =
        te::placeholder({ob, part_cb, p.kh, p.kw, reduced, ocb}, w.dtype, "weight.packed");
    te::Tensor padded = pad_blocked(data, p, w.dtype);
    EpilogueTensors ep = make_epilogue_placeholders(w, ob * ocb, {p.n, ob, oh, ow, ocb});
    IterVar rco = te::reduce_axis(part_cb, "rco"), ry = te::reduce_axis(p.kh, "ry");
    IterVar rx = te::reduce_axis(p.kw, "rx"), rci = te::reduce_axis(reduced, "rci");
    te::Tensor acc = te::compute(
        {p.n, ob, oh, ow, ocb},
        [&](const std::vector<Var>& v) -> Expr {
          // part_first_block of the output block's part; the blocks past the last one that a
          // short last part would read are clamped in (their weights are zero).
          Expr block = rco->var;
          Expr lane = rci->var;
          if (parts.count > 1) {
            Expr first_channel = v[1] / (parts.outputs / ocb) * parts.channels;
            block = first_channel / icb + rco->var;
            if (within_block) lane = first_channel % icb + rci->var;
            if (parts.count * parts.channels > cb * icb) block = ir::min(block, Expr(cb - 1));
          }
          Expr in =
              padded(v[0], block, v[2] * p.sh + ry->var * p.dh, v[3] * p.sw + rx->var * p.dw, lane);
          Expr wt = weight(v[1], rco, ry, rx, rci, v[4]);
          return te::sum(ir::make_cast(f32, in) * ir::make_cast(f32, wt), {rco, ry, rx, rci});
        },
        "conv.acc");
    te::Tensor out = blocked_epilogue(w, ep, acc, ocb);

    te::Schedule sch({out});
    if (!(padded == data)) schedule_copy_stage(sch, padded, cfg["parallel"] != 0, lanes);
    TileKnobs k{cfg["reg_n"],
                lanes,
                cfg["parallel"],
                cfg["oc_inner"],
                cfg["unroll_kw"] != 0,
                cfg["unroll_kh"] != 0,
                std::gcd(cfg["k_unroll"], reduced),
                ry,
                rx};
    std::vector<IterVar> reduce = cfg["reduce_order"] ? std::vector<IterVar>{ry, rx, rco, rci}
                                                      : std::vector<IterVar>{rco, ry, rx, rci};
    if (cfg["ic_chunk"] > 0)
      schedule_plane_tile(sch, out, acc, k, reduce, rco, std::gcd(cfg["ic_chunk"], part_cb));
    else
      schedule_register_tile(sch, out, acc, k, reduce);

    return finish_blocked(
        w, p, std::move(sch), data, weight, ep, out, icb, ocb,
        [p, reduced, ocb, parts](const Values& v) {
          return pack_conv_weight(v, p, reduced, ocb, parts);
        },
        ob * part_cb * p.kh * p.kw * reduced * ocb);
  }
};

}  // namespace

const OpTemplate& conv2d_nchwc_template() {
  static const Conv2dNchwc t;
  return t;
}

}  // namespace kiln::schedules
