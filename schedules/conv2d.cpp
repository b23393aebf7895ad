#include "schedules/conv2d.h"

#include <algorithm>
#include <numeric>

#include "compiler/base/error.h"
#include "schedules/conv2d_blocked.h"
#include "schedules/conv2d_pixel_blocks.h"
#include "schedules/conv2d_plane_tile.h"
#include "schedules/epilogue.h"
#include "schedules/layout.h"

namespace kiln::schedules {

using ir::DataType;
using ir::Expr;
using ir::IterVar;
using ir::Var;

Conv2dOp conv2d_compute(const Conv2dShape& s, DataType in, DataType out) {
  user_check(s.n > 0 && s.c > 0 && s.h > 0 && s.w > 0 && s.o > 0 && s.kh > 0 && s.kw > 0)
      << "conv2d: every dimension must be positive";
  user_check(s.stride > 0 && s.pad >= 0) << "conv2d: stride must be positive and pad >= 0";
  user_check(s.out_h() > 0 && s.out_w() > 0)
      << "conv2d: a " << s.kh << "x" << s.kw << " kernel does not fit a " << s.h << "x" << s.w
      << " input with padding " << s.pad;
  Conv2dOp op;
  op.data = te::placeholder({s.n, s.c, s.h, s.w}, in, "data");
  op.weight = te::placeholder({s.o, s.c, s.kh, s.kw}, in, "weight");
  const int64_t p = s.pad;
  if (p == 0) {
    op.pad = op.data;
  } else {
    op.pad = te::compute(
        {s.n, s.c, s.h + 2 * p, s.w + 2 * p},
        [&](Var n, Var c, Var y, Var x) {
          Expr inside = y >= p && y < s.h + p && x >= p && x < s.w + p;
          // Clamped indices keep the load in bounds on the lanes the select discards.
          Expr yy = ir::max(ir::min(y - p, Expr(s.h - 1)), Expr(0));
          Expr xx = ir::max(ir::min(x - p, Expr(s.w - 1)), Expr(0));
          return ir::make_select(inside, op.data(n, c, yy, xx), ir::make_zero(in));
        },
        "pad");
  }
  ir::IterVar rc = te::reduce_axis(s.c, "rc");
  ir::IterVar ry = te::reduce_axis(s.kh, "ry");
  ir::IterVar rx = te::reduce_axis(s.kw, "rx");
  DataType acc = DataType::f32();
  op.out = te::compute(
      {s.n, s.o, s.out_h(), s.out_w()},
      [&](Var n, Var o, Var y, Var x) {
        Expr a = ir::make_cast(acc, op.pad(n, rc, y * s.stride + ry->var, x * s.stride + rx->var));
        Expr b = ir::make_cast(acc, op.weight(o, rc, ry, rx));
        return te::sum(a * b, {rc, ry, rx});
      },
      "conv");
  if (out != acc) {
    te::Tensor c32 = op.out;
    op.out = te::compute(
        {s.n, s.o, s.out_h(), s.out_w()},
        [&](Var n, Var o, Var y, Var x) { return ir::make_cast(out, c32(n, o, y, x)); }, "conv.out");
  }
  return op;
}

void conv2d_reference(const Conv2dShape& s, const float* data, const float* weight, float* out) {
  const int64_t oh = s.out_h(), ow = s.out_w();
  for (int64_t n = 0; n < s.n; ++n)
    for (int64_t o = 0; o < s.o; ++o)
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t x = 0; x < ow; ++x) {
          double acc = 0;
          for (int64_t c = 0; c < s.c; ++c)
            for (int64_t ky = 0; ky < s.kh; ++ky)
              for (int64_t kx = 0; kx < s.kw; ++kx) {
                int64_t iy = y * s.stride + ky - s.pad, ix = x * s.stride + kx - s.pad;
                if (iy < 0 || iy >= s.h || ix < 0 || ix >= s.w) continue;
                acc += double(data[((n * s.c + c) * s.h + iy) * s.w + ix]) *
                       double(weight[((o * s.c + c) * s.kh + ky) * s.kw + kx]);
              }
          out[((n * s.o + o) * oh + y) * ow + x] = static_cast<float>(acc);
        }
}

// ---------------------------------------------------------------------------------------
// The "conv2d" workload: shape, reference, and the blocked templates.

Conv2dParams conv2d_params(const Workload& w) {
  Conv2dParams p{w.param("N"), w.param("C"), w.param("H"), w.param("W"),
                 w.param("O"), w.param("KH"), w.param("KW")};
  int64_t stride = w.param_or("stride", 1), pad = w.param_or("pad", 0);
  int64_t dil = w.param_or("dilation", 1);
  p.sh = w.param_or("SH", stride), p.sw = w.param_or("SW", stride);
  p.ph = w.param_or("PH", pad), p.pw = w.param_or("PW", pad);
  p.dh = w.param_or("DH", dil), p.dw = w.param_or("DW", dil);
  p.groups = w.param_or("groups", 1);
  user_check(p.n > 0 && p.c > 0 && p.h > 0 && p.w > 0 && p.o > 0 && p.kh > 0 && p.kw > 0)
      << "conv2d: N, C, H, W, O, KH, KW must be positive, got " << w.str();
  user_check(p.sh > 0 && p.sw > 0) << "conv2d: stride must be positive, got " << w.str();
  user_check(p.dh > 0 && p.dw > 0) << "conv2d: dilation must be positive, got " << w.str();
  user_check(p.ph >= 0 && p.pw >= 0) << "conv2d: padding must be >= 0, got " << w.str();
  user_check(p.groups > 0) << "conv2d: groups must be positive, got " << p.groups;
  user_check(p.c % p.groups == 0 && p.o % p.groups == 0)
      << "conv2d: C (" << p.c << ") and O (" << p.o << ") must both be divisible by groups ("
      << p.groups << ")";
  int64_t ekh = p.dh * (p.kh - 1) + 1, ekw = p.dw * (p.kw - 1) + 1;
  user_check(ekh <= p.h + 2 * p.ph && ekw <= p.w + 2 * p.pw)
      << "conv2d: the " << p.kh << "x" << p.kw << " kernel (dilation " << p.dh << "x" << p.dw
      << ") is larger than the padded " << p.h + 2 * p.ph << "x" << p.w + 2 * p.pw << " input";
  return p;
}

Values conv2d_reference(const Conv2dParams& p, const Values& data, const Values& weight) {
  const int64_t oh = p.out_h(), ow = p.out_w(), cg = p.c / p.groups, og = p.o / p.groups;
  Values out(static_cast<size_t>(p.n * p.o * oh * ow));
  for (int64_t n = 0; n < p.n; ++n)
    for (int64_t o = 0; o < p.o; ++o)
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t x = 0; x < ow; ++x) {
          double acc = 0;
          for (int64_t ci = 0; ci < cg; ++ci) {
            int64_t c = o / og * cg + ci;
            for (int64_t ky = 0; ky < p.kh; ++ky)
              for (int64_t kx = 0; kx < p.kw; ++kx) {
                int64_t iy = y * p.sh + ky * p.dh - p.ph, ix = x * p.sw + kx * p.dw - p.pw;
                if (iy < 0 || iy >= p.h || ix < 0 || ix >= p.w) continue;
                acc += double(data[((n * p.c + c) * p.h + iy) * p.w + ix]) *
                       double(weight[((o * cg + ci) * p.kh + ky) * p.kw + kx]);
              }
          }
          out[((n * p.o + o) * oh + y) * ow + x] = static_cast<float>(acc);
        }
  return out;
}

namespace {

// Vector registers of the target: AVX2 has 16 ymm, AVX-512 32 zmm, AArch64 32 v.
int64_t vector_registers(const Target& t) {
  return t.is_x86() && t.vector_bits < 512 ? 16 : 32;
}

// Vectors of output channels per block: `pref`, at most what the channels fill, and 2
// rather than 3 (the spaces offer 1, 2 or 4 vectors: oc_bn_choices).
int64_t pick_oc_vecs(int64_t pref, int64_t channels, int64_t lanes) {
  int64_t vecs = std::min(pref, ceil_div(channels, lanes));
  return vecs == 3 ? 2 : vecs;
}

// How a grouped conv's blocked kernel splits its channels into parts, each output block
// reading only the input blocks that hold its part's channels: parts of whole groups, as few
// groups each as the blocks allow. That takes an output block inside one group (ocb dividing
// O / groups) or holding whole groups (O / groups dividing ocb; RegNet's 55 groups of 8 in
// 16-channel blocks leave a last part of one group), and input blocks that divide a part's
// channels or hold whole parts (a network's layout may fix them wider). The weights are
// block-diagonal over the channels a block reads, so the kernel does ocb / (O / groups) times
// icb / part channels times the FLOPs at most (2 for ResNeXt's 4-channel groups in 8-channel
// blocks), where one part of all C channels does `groups` times. One part of all channels when
// the blocks do not fit the groups (or groups is 1): every block reads all C channels.
struct ChannelParts {
  int64_t count = 1;  // parts
  int64_t channels;   // input channels per part (the last part may hold fewer)
  int64_t outputs;    // output channels per part: a whole number of output blocks
};

// One part: every output block reads all C channels.
ChannelParts all_channels(const Conv2dParams& p, int64_t ocb) {
  return {1, p.c, ceil_div(p.o, ocb) * ocb};
}

ChannelParts channel_parts(const Conv2dParams& p, int64_t icb, int64_t ocb) {
  const ChannelParts whole = all_channels(p, ocb);
  const int64_t og = p.o / p.groups, cg = p.c / p.groups;
  if (p.groups == 1 || (og % ocb != 0 && ocb % og != 0)) return whole;
  const int64_t groups_per_part = std::max<int64_t>(1, ocb / og);
  if (groups_per_part >= p.groups) return whole;  // one block holds every group
  const ChannelParts parts{ceil_div(p.groups, groups_per_part), cg * groups_per_part,
                           og * groups_per_part};
  return parts.channels % icb == 0 || icb % parts.channels == 0 ? parts : whole;
}

// The first input block a part reads, and how many (channel_parts): a part starts at a
// multiple of its channels, so one that divides the block lies inside one block.
int64_t part_first_block(const ChannelParts& parts, int64_t part, int64_t icb) {
  return part * parts.channels / icb;
}
int64_t part_blocks(const ChannelParts& parts, int64_t icb) {
  return ceil_div(parts.channels, icb);
}

// Weights OIHW (O x C/groups x KH x KW) -> [O/ocb, part_blocks, KH, KW, icb, ocb],
// zero-padded, each output block over the input blocks its part reads (channel_parts).
// Grouped weights are block-diagonal over those blocks' channels.
Values pack_conv_weight(const Values& wv, const Conv2dParams& p, int64_t icb, int64_t ocb,
                        const ChannelParts& parts) {
  const int64_t cb = part_blocks(parts, icb), ob = ceil_div(p.o, ocb);
  const int64_t cg = p.c / p.groups, og = p.o / p.groups;
  Values out(static_cast<size_t>(ob * cb * p.kh * p.kw * icb * ocb), 0.0f);
  for (int64_t o = 0; o < p.o; ++o)
    for (int64_t ci = 0; ci < cg; ++ci) {
      // The channel within the blocks its part reads.
      int64_t c = o / og * cg + ci - part_first_block(parts, o / parts.outputs, icb) * icb;
      for (int64_t ky = 0; ky < p.kh; ++ky)
        for (int64_t kx = 0; kx < p.kw; ++kx)
          out[(((((o / ocb) * cb + c / icb) * p.kh + ky) * p.kw + kx) * icb + c % icb) * ocb +
              o % ocb] = wv[((o * cg + ci) * p.kh + ky) * p.kw + kx];
    }
  return out;
}

// Depthwise weights [C, 1, KH, KW] -> [C/bn, KH, KW, bn], zero-padded.
Values pack_depthwise_weight(const Values& wv, const Conv2dParams& p, int64_t bn) {
  const int64_t cb = ceil_div(p.c, bn);
  Values out(static_cast<size_t>(cb * p.kh * p.kw * bn), 0.0f);
  for (int64_t c = 0; c < p.c; ++c)
    for (int64_t k = 0; k < p.kh * p.kw; ++k)
      out[((c / bn) * p.kh * p.kw + k) * bn + c % bn] = wv[c * p.kh * p.kw + k];
  return out;
}

// Base of the direct conv2d templates: the shared conv2d interface (conv2d.h) plus the
// kernel assembly of the blocked ones.
class DirectConv2dTemplate : public Conv2dTemplate {
 protected:
  // The kernel (data, weight, the epilogue's tensors, out) of a blocked template, its
  // arguments logical outside (blocked_conv_args).
  ScheduledKernel finish_blocked(const Workload& w, const Conv2dParams& p, te::Schedule sch,
                                 const te::Tensor& data, const te::Tensor& weight,
                                 const EpilogueTensors& ep, const te::Tensor& out, int64_t icb,
                                 int64_t ocb, std::function<Values(const Values&)> pack_w,
                                 int64_t weight_elements) const {
    return {
        std::move(sch), with_epilogue_args({data, weight}, ep, out),
        blocked_conv_args(inputs(w), output(w), p, icb, ocb, std::move(pack_w), weight_elements),
        p.flops()};
  }
};

// out = cast(epilogue(acc)) over a blocked output [..., ocb] whose axis 1 is the block.
te::Tensor blocked_epilogue(const Workload& w, const EpilogueTensors& ep, const te::Tensor& acc,
                            int64_t ocb) {
  std::vector<Expr> shape = acc.shape();
  const size_t last = shape.size() - 1;
  return te::compute(
      shape,
      [&](const std::vector<Var>& v) -> Expr {
        std::vector<Expr> idx(v.begin(), v.end());
        Expr channel = v[1] * ocb + v[last];
        return ir::make_cast(w.dtype, apply_epilogue(w, ep, acc(idx), idx, channel));
      },
      "conv");
}

// ---------------------------------------------------------------------------------------
// conv2d.nchwc

// Whether the fallback takes the plane tile (one channel block at a time for the whole
// plane, conv2d_plane_tile.h): where the row tile would stream an output block's whole
// weight panel again for every row (several rows, many input channels) and the plane's
// accumulators (oh x ow x ocb) and one channel block of weights (KH x KW x icb x ocb) both
// fit comfortably in L1 (ResNet's 7x7 and 14x14 3x3 layers).
bool plane_tile_pays(const Conv2dParams& p, int64_t icb, int64_t ocb) {
  const int64_t acc_bytes = p.out_h() * p.out_w() * ocb * 4;
  const int64_t weight_block_bytes = p.kh * p.kw * icb * ocb * 4;
  return p.out_h() > 1 && p.kh * p.kw > 1 && p.c >= 128 && acc_bytes <= 32 * 1024 &&
         weight_block_bytes <= 40 * 1024;
}

// The fallback's loop order of output blocks (TileKnobs::oc_inner): outermost (0) unless
// the input is large and many output blocks would each stream all of it again. With the
// blocks outermost, every block walks the whole input, C / icb channel blocks far apart in
// memory; once the input is past the caches this runs at the latency of those scattered
// streams, not at the FMA rate. Blocks inside the W tiles (2) read each input tile once
// from memory and reuse it from L1 for every block, at the price of walking the weights
// per tile (from L2). Measured (AMD Zen 3, AVX2, conv2d.nchwc, 1 and 2 threads): SegFormer's
// 1024->256 1x1 on 56x56 13 -> 68 GFLOPS at 1 thread, DeepLab's 1280->256 1x1 on 33x33
// 9 -> 45, a 256->256 3x3 on 56x56 55 -> 74; inputs of 0.8 MB (ResNet-18's first stage)
// or few channel blocks (32 channels on 224x224) gain nothing, so they keep the order.
int64_t pick_oc_inner(const Conv2dParams& p, int64_t ocb, int64_t elem_bytes) {
  const int64_t input_bytes = p.c * p.h * p.w * elem_bytes;
  const bool many_blocks = ceil_div(p.o, ocb) >= 4;
  return p.groups == 1 && p.c >= 128 && many_blocks && input_bytes >= (2 << 20) ? 2 : 0;
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
    // 0: the row tile (schedule_register_tile); c > 0: the plane tile (conv2d_plane_tile.h),
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
    return Config({{"ic_bn", icb},
                   {"oc_bn", vecs * lanes},
                   {"reg_n", reg_n},
                   {"unroll_kw", p.kw <= 3 ? 1 : 0},
                   {"unroll_kh", 0},
                   {"k_unroll", 1},
                   {"reduce_order", 0},
                   {"ic_chunk", plane_tile_pays(p, icb, vecs * lanes) ? 1 : 0},
                   {"oc_inner", pick_oc_inner(p, vecs * lanes, w.dtype.bytes())},
                   {"parallel", p.flops() > 2e6 ? 1 : 0}});
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

    te::Tensor data = te::placeholder({p.n, cb, p.h, p.w, icb}, w.dtype, "data");
    te::Tensor weight =
        te::placeholder({ob, part_cb, p.kh, p.kw, icb, ocb}, w.dtype, "weight.packed");
    te::Tensor padded = pad_blocked(data, p, w.dtype);
    EpilogueTensors ep = make_epilogue_placeholders(w, ob * ocb, {p.n, ob, oh, ow, ocb});
    IterVar rco = te::reduce_axis(part_cb, "rco"), ry = te::reduce_axis(p.kh, "ry");
    IterVar rx = te::reduce_axis(p.kw, "rx"), rci = te::reduce_axis(icb, "rci");
    te::Tensor acc = te::compute(
        {p.n, ob, oh, ow, ocb},
        [&](const std::vector<Var>& v) -> Expr {
          // part_first_block of the output block's part; the blocks past the last one that a
          // short last part would read are clamped in (their weights are zero).
          Expr block = rco->var;
          if (parts.count > 1) {
            block = v[1] / (parts.outputs / ocb) * parts.channels / icb + rco->var;
            if (parts.count * parts.channels > cb * icb) block = ir::min(block, Expr(cb - 1));
          }
          Expr in =
              padded(v[0], block, v[2] * p.sh + ry->var * p.dh, v[3] * p.sw + rx->var * p.dw, rci);
          Expr wt = weight(v[1], rco, ry, rx, rci, v[4]);
          return te::sum(ir::make_cast(f32, in) * ir::make_cast(f32, wt), {rco, ry, rx, rci});
        },
        "conv.acc");
    te::Tensor out = blocked_epilogue(w, ep, acc, ocb);

    te::Schedule sch({out});
    if (!(padded == data)) schedule_copy_stage(sch, padded, cfg["parallel"] != 0);
    TileKnobs k{cfg["reg_n"], lanes, cfg["parallel"], cfg["oc_inner"], cfg["unroll_kw"] != 0,
                cfg["unroll_kh"] != 0, std::gcd(cfg["k_unroll"], icb), ry, rx};
    std::vector<IterVar> reduce = cfg["reduce_order"] ? std::vector<IterVar>{ry, rx, rco, rci}
                                                      : std::vector<IterVar>{rco, ry, rx, rci};
    if (cfg["ic_chunk"] > 0)
      schedule_plane_tile(sch, out, acc, k, reduce, rco, std::gcd(cfg["ic_chunk"], part_cb));
    else
      schedule_register_tile(sch, out, acc, k, reduce);

    return finish_blocked(
        w, p, std::move(sch), data, weight, ep, out, icb, ocb,
        [p, icb, ocb, parts](const Values& v) { return pack_conv_weight(v, p, icb, ocb, parts); },
        ob * part_cb * p.kh * p.kw * icb * ocb);
  }
};

// ---------------------------------------------------------------------------------------
// conv2d.1x1

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
    // conv2d_pixel_blocks.h.
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
    // two streams, K chunks and blocks of ~49 pixels (conv2d_pixel_blocks.h): measured in
    // MobileNetV2 at 1 thread, x86-avx512, 7x7 and 14x14 layers 5-30% faster than without.
    int64_t pref = small ? 2 : t.is_x86() ? (lanes >= 16 ? 4 : 2) : 4;
    int64_t vecs = pick_oc_vecs(pref, p.o, lanes);
    int64_t reg_n = pick_reg_n(pixels, std::min<int64_t>(budget / vecs, 16));
    return Config({{"ic_bn", pick_ic_bn(p.c, small ? 32 : 16)},
                   {"oc_bn", vecs * lanes},
                   {"reg_n", reg_n},
                   {"k_unroll", 1},
                   {"oc_inner", small ? 0 : pick_oc_inner(p, vecs * lanes, w.dtype.bytes())},
                   {"parallel", p.flops() > 2e6 ? 1 : 0},
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
    // (conv2d_pixel_blocks.h: more prefetch streams in flight from L3).
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

// ---------------------------------------------------------------------------------------
// conv2d.depthwise

class Conv2dDepthwise : public DirectConv2dTemplate {
 public:
  std::string name() const override { return "conv2d.depthwise"; }
  static bool is_depthwise(const Conv2dParams& p) {
    return p.groups == p.c && p.o == p.c;
  }
  bool applies(const Workload& w, const Target&) const override {
    return w.op == "conv2d" && is_depthwise(conv2d_params(w));
  }
  static Conv2dParams params(const Workload& w) {
    Conv2dParams p = conv2d_params(w);
    user_check(is_depthwise(p)) << "conv2d.depthwise needs groups == C == O (channel "
                                << "multiplier 1), got " << w.str() << " (use conv2d.nchwc)";
    return p;
  }

  ConfigSpace space(const Workload& w, const Target& t) const override {
    Conv2dParams p = params(w);
    const int64_t lanes = t.lanes(DataType::f32());
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
    const int64_t lanes = t.lanes(DataType::f32());
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
    const DataType f32 = DataType::f32();
    const int64_t lanes = t.lanes(f32), bn = cfg["c_bn"], cb = ceil_div(p.c, bn);
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
          return te::sum(ir::make_cast(f32, in) * ir::make_cast(f32, wt), {ry, rx});
        },
        "conv.acc");
    te::Tensor out = blocked_epilogue(w, ep, acc, bn);

    te::Schedule sch({out});
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

std::vector<TensorSpec> Conv2dTemplate::inputs(const Workload& w) const {
  Conv2dParams p = conv2d_params(w);
  std::vector<TensorSpec> in = {{"data", {p.n, p.c, p.h, p.w}},
                                {"weight", {p.o, p.c / p.groups, p.kh, p.kw}}};
  auto extra = epilogue_inputs(w, p.o, {p.n, p.o, p.out_h(), p.out_w()});
  in.insert(in.end(), extra.begin(), extra.end());
  return in;
}

TensorSpec Conv2dTemplate::output(const Workload& w) const {
  Conv2dParams p = conv2d_params(w);
  return {"out", {p.n, p.o, p.out_h(), p.out_w()}};
}

Values Conv2dTemplate::reference(const Workload& w, const std::vector<Values>& in) const {
  Conv2dParams p = conv2d_params(w);
  Values out = conv2d_reference(p, in[0], in[1]);
  std::vector<const Values*> extra;
  for (size_t i = 2; i < in.size(); ++i) extra.push_back(&in[i]);
  const int64_t hw = p.out_h() * p.out_w();
  for (int64_t i = 0; i < static_cast<int64_t>(out.size()); ++i)
    out[i] = static_cast<float>(apply_epilogue_reference(w, extra, out[i], (i / hw) % p.o, i));
  return out;
}

std::vector<std::string> Conv2dTemplate::epilogues() const { return epilogue_names(); }

const OpTemplate& conv2d_nchwc_template() {
  static const Conv2dNchwc t;
  return t;
}

const OpTemplate& conv2d_1x1_template() {
  static const Conv2d1x1 t;
  return t;
}

const OpTemplate& conv2d_depthwise_template() {
  static const Conv2dDepthwise t;
  return t;
}

}  // namespace kiln::schedules
