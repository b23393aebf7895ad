#include "schedules/conv2d/amx.h"

#include <algorithm>

#include "compiler/base/error.h"
#include "schedules/amx_tile.h"
#include "schedules/conv2d/blocked.h"
#include "schedules/conv2d/common.h"
#include "schedules/conv2d/lowp.h"
#include "schedules/epilogue.h"
#include "schedules/parallel_rule.h"

namespace kiln::schedules {

using ir::DataType;
using ir::Expr;
using ir::IterVar;
using ir::Var;

namespace {

// The logical interface, reference and epilogues are every conv2d template's (common.h).
class Conv2dBf16Amx final : public Conv2dTemplate {
 public:
  std::string name() const override { return "conv2d.bf16.amx"; }
  std::vector<DataType> dtypes() const override { return {DataType::bf16()}; }

  bool applies(const Workload& w, const Target& t) const override {
    if (w.op != "conv2d" || w.dtype != DataType::bf16() || !has_amx_bf16(t)) return false;
    const Conv2dParams p = conv2d_params(w);
    return p.groups == 1 && p.sh == 1 && p.sw == 1 && p.dh == 1 && p.dw == 1;
  }

  ConfigSpace space(const Workload& w, const Target&) const override {
    const Conv2dParams p = conv2d_params(w);
    ConfigSpace cs;
    // Blocks of 16 or 32 flat output pixels, 16 or 32 output channels: up to 2x2 C tiles.
    cs.define_knob("row_tiles", flat_outputs(p) > kAmxTileRows ? std::vector<int64_t>{1, 2}
                                                               : std::vector<int64_t>{1});
    cs.define_knob("col_tiles", p.o > kAmxTileRows ? std::vector<int64_t>{1, 2}
                                                   : std::vector<int64_t>{1});
    cs.define_knob("parallel", {0, 1});
    return cs;
  }

  Config fallback(const Workload& w, const Target&) const override {
    const Conv2dParams p = conv2d_params(w);
    // Two column tiles (2 x 2 accumulators) only past 64 input channels: at 64, 2 x 1 ran
    // 1.75x faster on ResNet-18's 56² 3x3 layer (1181 against 673 GFLOPS, 1 thread,
    // Sapphire Rapids), while 2 x 2 led by 9-12% at 128 and 256 channels and tied at 512.
    return Config({{"row_tiles", flat_outputs(p) > kAmxTileRows ? 2 : 1},
                   {"col_tiles", p.o > kAmxTileRows && p.c > 64 ? 2 : 1},
                   {"parallel", worth_parallel(p.flops()) ? 1 : 0}});
  }

 protected:
  void check(const Workload& w, const Target& t) const override {
    const Conv2dParams p = conv2d_params(w);
    user_check(w.dtype == DataType::bf16() && has_amx_bf16(t))
        << name() << ": " << w.str() << " on target " << t.name
        << " is not supported (needs dtype bf16 and an x86 target with +amx-tile and "
           "+amx-bf16, e.g. host on a Sapphire Rapids CPU)";
    user_check(p.groups == 1 && p.sh == 1 && p.sw == 1 && p.dh == 1 && p.dw == 1)
        << name() << ": needs stride 1, dilation 1 and groups 1, got " << w.str()
        << " (conv2d.bf16.x86 takes the others)";
  }

  ScheduledKernel schedule(const Workload& w, const Target&, const Config& cfg) const override {
    const Conv2dParams p = conv2d_params(w);
    const DataType f32 = DataType::f32(), bf16 = DataType::bf16();
    const int64_t mt = cfg["row_tiles"], nt = cfg["col_tiles"];
    const int64_t icb = kAmxKStep, ocb = nt * kAmxTileRows, block = mt * kAmxTileRows;
    const int64_t cb = ceil_div(p.c, icb), ob = ceil_div(p.o, ocb);
    const int64_t oh = p.out_h(), ow = p.out_w();
    const int64_t hp = p.h + 2 * p.ph, wp = p.w + 2 * p.pw;
    // Output pixel (y, x) is flat position q = y * Wp + x; the blocks cover q in [0, qp).
    const int64_t qp = ceil_div(flat_outputs(p), block) * block;
    // The last block reads up to qp - 1 + (KH - 1) * Wp + KW - 1.
    const int64_t flat_len = std::max(hp * wp, qp + (p.kh - 1) * wp + p.kw - 1);

    te::Tensor data = te::placeholder({p.n, cb, p.h, p.w, icb}, bf16, "data");
    te::Tensor weight =
        te::placeholder({ob, cb, p.kh, p.kw, icb / 2, ocb * 2}, bf16, "weight.vnni");
    EpilogueTensors ep = make_epilogue_placeholders(w, ob * ocb, {p.n, ob, oh, ow, ocb});
    te::Tensor flat = te::compute(
        {p.n, cb, flat_len, icb},
        [&](const std::vector<Var>& v) -> Expr {
          Expr y = v[2] / wp - p.ph, x = v[2] % wp - p.pw;
          Expr inside = v[2] < hp * wp && y >= 0 && y < p.h && x >= 0 && x < p.w;
          Expr yy = ir::max(ir::min(y, Expr(p.h - 1)), Expr(0));
          Expr xx = ir::max(ir::min(x, Expr(p.w - 1)), Expr(0));
          return ir::make_select(inside, data(v[0], v[1], yy, xx, v[3]), ir::make_zero(bf16));
        },
        "data.flat");
    IterVar rco = te::reduce_axis(cb, "rco"), ry = te::reduce_axis(p.kh, "ry");
    IterVar rx = te::reduce_axis(p.kw, "rx"), rc = te::reduce_axis(icb, "rc");
    // Accumulators over flat output positions: a block may span the end of one row and the
    // start of the next; positions with x >= OW (they read the padding) are never stored.
    te::Tensor acc = te::compute(
        {p.n, ob, qp, ocb},
        [&](const std::vector<Var>& v) -> Expr {
          Expr in = flat(v[0], rco, v[2] + ry->var * wp + rx->var, rc);
          Expr wt = weight(v[1], rco, ry, rx, rc->var / 2, v[3] * 2 + rc->var % 2);
          return te::sum(ir::make_cast(f32, in) * ir::make_cast(f32, wt), {rco, ry, rx, rc});
        },
        "conv.acc");
    const DataType out_t = w.param_or("out_f32", 0) != 0 ? f32 : w.dtype;
    te::Tensor out = te::compute(
        {p.n, ob, oh, ow, ocb},
        [&](const std::vector<Var>& v) -> Expr {
          std::vector<Expr> idx(v.begin(), v.end());
          Expr a = acc(v[0], v[1], v[2] * wp + v[3], v[4]);
          return ir::make_cast(out_t, apply_epilogue(w, ep, a, idx, v[1] * ocb + v[4]));
        },
        "conv");

    te::Schedule sch({out});
    const bool parallel = cfg["parallel"] != 0;
    schedule_copy_stage(sch, flat, parallel);
    // The output pass (epilogue, rounding) per image and channel block ("plane"), over rows,
    // the channel block vectorized; planes in parallel.
    te::Stage o = sch[out];
    IterVar planes = o.fuse(o.axis(0), o.axis(1));
    auto [cv, cl] = o.split(o.axis(4), kAmxTileRows);
    o.reorder({planes, o.axis(2), o.axis(3), cv, cl});
    o.vectorize(cl);
    if (parallel) o.parallel(planes);
    // The accumulators: one block of flat pixels x output channels in tile registers over all
    // channel blocks and taps. Computed per plane (it stays in L2: a 56x56 1x1 layer's whole
    // f32 output is 3.2 MB, ~2x slower at root) where the plane's flat positions are whole
    // blocks; otherwise (bound inference would give the plane a partial last block) at the
    // root, all planes' blocks in parallel.
    te::Stage a = sch[acc];
    const bool per_plane = flat_outputs(p) == qp;
    if (per_plane) a.compute_at(o, planes);
    auto [qo, qi] = a.split(a.axis(2), block);
    auto [av, al] = a.split(a.axis(3), kAmxTileRows);
    if (per_plane) {
      a.reorder({qo, rco, ry, rx, rc, qi, av, al});
    } else {
      IterVar blocks = a.fuse(a.fuse(a.axis(0), a.axis(1)), qo);
      a.reorder({blocks, rco, ry, rx, rc, qi, av, al});
      if (parallel) a.parallel(blocks);
    }
    a.tensorize(rco, gemm_tile(mt, nt, {cb, p.kh, p.kw}, wp));

    auto pack = [p, icb, ocb](const Values& v) { return pack_conv_weight_vnni(v, p, icb, ocb); };
    return {std::move(sch), with_epilogue_args({data, weight}, ep, out),
            blocked_conv_args(inputs(w), output(w), p, icb, ocb, pack,
                              ob * cb * p.kh * p.kw * icb * ocb),
            p.flops()};
  }

 private:
  // Flat output positions up to the last output pixel: (OH - 1) * Wp + OW.
  static int64_t flat_outputs(const Conv2dParams& p) {
    return (p.out_h() - 1) * (p.w + 2 * p.pw) + p.out_w();
  }

  // Step (channel block, ky, kx): A moves a channel block and ky rows + kx pixels of the
  // flat image; B one (block, tap) of the packed weights.
  static te::TensorIntrin gemm_tile(int64_t mt, int64_t nt, std::vector<int64_t> steps,
                                    int64_t wp) {
    return amx_gemm_bf16_tile({mt, nt, std::move(steps)}, [wp](const te::TensorizeRegion& r) {
      internal_check(r.inputs.size() == 2 && r.output_base.size() == 4)
          << "conv2d.bf16.amx: unexpected region";
      const bool w_first = r.inputs[0].first->name == "weight.vnni";
      const auto& [d, d_base] = r.inputs[w_first ? 1 : 0];
      const auto& [wt, w_base] = r.inputs[w_first ? 0 : 1];
      internal_check(wt->name == "weight.vnni" && d_base.size() == 4 && w_base.size() == 6)
          << "conv2d.bf16.amx: expects data.flat and weight.vnni";
      AmxOperands ops;
      ops.c_row = [out = r.output, base = r.output_base](int64_t row) {
        return ir::make_load(out, {base[0], base[1], base[2] + Expr(row), base[3]});
      };
      ops.a_row = [d, d_base, wp](const StepIndex& at, int64_t row) {
        Expr pixel = d_base[2] + Expr(at[1] * wp + at[2] + row);
        return ir::make_load(d, {d_base[0], d_base[1] + Expr(at[0]), pixel, d_base[3]});
      };
      ops.b_row = [wt, w_base](const StepIndex& at, int64_t row) {
        return ir::make_load(wt, {w_base[0], w_base[1] + Expr(at[0]), w_base[2] + Expr(at[1]),
                                  w_base[3] + Expr(at[2]), w_base[4] + Expr(row), w_base[5]});
      };
      return ops;
    });
  }
};

}  // namespace

const OpTemplate& conv2d_bf16_amx_template() {
  static const Conv2dBf16Amx t;
  return t;
}

}  // namespace kiln::schedules
