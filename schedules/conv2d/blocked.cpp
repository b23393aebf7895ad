#include "schedules/conv2d/blocked.h"

#include <algorithm>

#include "compiler/ir/op.h"
#include "schedules/layout.h"

namespace kiln::schedules {

using ir::Expr;
using ir::Var;

std::vector<int64_t> reg_n_choices(int64_t extent, int64_t widest) {
  std::vector<int64_t> out;
  for (int64_t r : {1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 14, 16})
    if (r <= widest && r <= std::max<int64_t>(extent, 1)) out.push_back(r);
  return out;
}

int64_t pick_reg_n(int64_t extent, int64_t max_r, int64_t widest) {
  std::vector<int64_t> ch = reg_n_choices(extent, widest);
  int64_t best = 1;
  for (int64_t r : ch)
    if (r <= max_r) best = r;
  for (auto it = ch.rbegin(); it != ch.rend(); ++it)
    if (*it <= max_r && 2 * *it >= best && extent % *it == 0) return *it;
  return best;
}

std::vector<int64_t> oc_bn_choices(int64_t channels, int64_t lanes) {
  std::vector<int64_t> out = {lanes};
  for (int64_t v : {2, 4})
    if (v <= ceil_div(channels, lanes)) out.push_back(v * lanes);
  return out;
}

std::vector<int64_t> ic_bn_choices(int64_t c, bool even) {
  std::vector<int64_t> out;
  for (int64_t b : {1, 2, 4, 8, 16, 32, 64})
    if (b < 2 * c && (!even || b % 2 == 0)) out.push_back(b);
  int64_t whole = even ? c + c % 2 : c;
  if (whole <= 64 && std::find(out.begin(), out.end(), whole) == out.end()) out.push_back(whole);
  if (out.empty()) out.push_back(2);
  std::sort(out.begin(), out.end());
  return out;
}

int64_t pick_ic_bn(int64_t c, int64_t cap, bool even) {
  int64_t b = 1;
  for (int64_t x = 2; x <= cap; x *= 2)
    if (c % x == 0) b = x;
  if (b < 4) b = c <= 64 ? c : std::min<int64_t>(cap, 16);  // one (or few) unpadded blocks
  return even ? b + b % 2 : b;
}

te::Tensor pad_blocked(const te::Tensor& data, const Conv2dParams& p, ir::DataType dtype) {
  if (p.ph == 0 && p.pw == 0) return data;
  const auto& sh = data.shape();
  const int64_t ph = p.ph, pw = p.pw, h = p.h, w = p.w;
  return te::compute(
      {sh[0], sh[1], Expr(h + 2 * ph), Expr(w + 2 * pw), sh[4]},
      [&](const std::vector<Var>& v) -> Expr {
        Expr y = v[2], x = v[3];
        Expr inside = y >= ph && y < h + ph && x >= pw && x < w + pw;
        // Clamped indices keep the load in bounds where the select picks zero.
        Expr yy = ir::max(ir::min(y - ph, Expr(h - 1)), Expr(0));
        Expr xx = ir::max(ir::min(x - pw, Expr(w - 1)), Expr(0));
        return ir::make_select(inside, data(v[0], v[1], yy, xx, v[4]), ir::make_zero(dtype));
      },
      "data.pad");
}

void schedule_copy_stage(te::Schedule& sch, const te::Tensor& t, bool parallel, int64_t lanes) {
  te::Stage st = sch[t];
  ir::IterVar outer = st.fuse(st.axis(0), st.axis(1));
  if (t.ndim() == 5) outer = st.fuse(outer, st.axis(2));
  auto block = ir::as_const_int(t.shape().back());
  if (t.ndim() == 5 && lanes > 1 && block && *block == 1) {
    // Blocks of one channel are NCHW planes: copy each row in vectors along W. The loop
    // partitioning peels the padded ends, so the middle is plain vector copies (element by
    // element, a 224x224 image's padded copy took three times the stem conv itself).
    auto [xo, xi] = st.split(st.leaf_axes()[1], lanes);
    st.vectorize(xi);
  } else {
    st.vectorize(st.axis(t.ndim() - 1));  // left serial by the vectorizer if not a power of 2
  }
  if (parallel) st.parallel(outer);
}

void define_pad_knob(ConfigSpace& cs, const Conv2dParams& p) {
  if (p.ph == 0 && p.pw == 0) return;  // nothing to pad: no knob, the space stays as it was
  std::vector<int64_t> rows = {0};
  for (int64_t r : {1, 2, 4, 8})
    if (r <= p.out_h()) rows.push_back(r);
  cs.define_knob("pad_rows", rows, 0);
}

int64_t pick_pad_rows(const Conv2dParams& p, int64_t block, int64_t bytes, int64_t budget) {
  // Strided convs share fewer input rows between bands, and wider bands measured slower
  // for them (96ch 112x112 stride 2 on a Xeon: 0.21 ms at one row, 0.23-0.25 at 2-8).
  if (p.sh > 1) return 1;
  const int64_t row_bytes = (p.w + 2 * p.pw) * block * bytes;
  int64_t best = 1;
  for (int64_t r : {2, 4, 8})
    if (r <= p.out_h() && band_input_rows(p, r) * row_bytes <= budget) best = r;
  return best;
}

int64_t band_input_rows(const Conv2dParams& p, int64_t rows) {
  rows = std::min(rows, p.out_h());
  return (rows - 1) * p.sh + (p.kh - 1) * p.dh + 1;
}

void schedule_pad_stage(te::Schedule& sch, const te::Tensor& padded, const te::Tensor& out,
                        ir::IterVar band, int64_t pad_rows, const TileKnobs& k,
                        const Conv2dParams& p) {
  if (pad_rows == 0) {
    schedule_copy_stage(sch, padded, k.parallel != 0);
    return;
  }
  te::Stage ps = sch[padded];
  ps.compute_at(sch[out], band);
  ps.vectorize(ps.axis(padded.ndim() - 1));
  // The band's region: one channel block over the whole padded width, or every block over
  // one W tile's columns when the block loop is inside the tiles (oc_inner 2).
  const int64_t blocks = *ir::as_const_int(padded.shape()[1]);
  const int64_t block = *ir::as_const_int(padded.shape()[4]);
  const int64_t tile_cols = (k.reg_n - 1) * p.sw + (p.kw - 1) * p.dw + 1;
  const int64_t elements = k.oc_inner == 2 ? tile_cols * blocks * block : (p.w + 2 * p.pw) * block;
  const int64_t bytes = band_input_rows(p, pad_rows) * elements * padded.dtype().bytes();
  // On the stack where it is small; a larger band goes to the workspace rather than risk a
  // worker thread's stack.
  if (bytes <= kMaxLocalPadBytes) ps.set_scope(ir::MemScope::Local);
}

void define_tile_loop_knobs(ConfigSpace& cs) {
  // Where the output-block loop sits; 0 (outside the rows) for logs of templates that had no
  // such knob yet (depthwise).
  cs.define_knob("oc_inner", {0, 1, 2}, 0);
  cs.define_knob("parallel", {0, 1, 2});  // serial, fine or coarse chunks
}

std::vector<int64_t> unroll_kh_choices(const Conv2dParams& p) {
  return p.kh > 1 ? std::vector<int64_t>{0, 1} : std::vector<int64_t>{0};
}

TileLoops schedule_tile_output(te::Schedule& sch, const te::Tensor& out, const TileKnobs& k,
                               int64_t block_tiles) {
  te::Stage os = sch[out];
  auto [xo, xi] = os.split(os.axis(3), k.reg_n);
  // Blocks of tiles: the block loop takes the tile loop's place, its tiles run inside it.
  std::vector<ir::IterVar> inner = {xi};
  if (block_tiles > 1) {
    auto [xb, xt] = os.split(xo, block_tiles);
    xo = xb;
    inner.insert(inner.begin(), xt);
  }
  auto [lv, ll] = os.split(os.axis(4), k.lanes);
  ir::IterVar n = os.axis(0), b = os.axis(1), y = os.axis(2), yi;
  if (k.band_rows > 1) std::tie(y, yi) = os.split(y, k.band_rows);
  std::vector<ir::IterVar> loops = k.oc_inner == 2   ? std::vector<ir::IterVar>{n, y, xo, b}
                                   : k.oc_inner == 1 ? std::vector<ir::IterVar>{n, y, b, xo}
                                                     : std::vector<ir::IterVar>{n, b, y, xo};
  // The rows of a band run just outside the tile loop, so that the band loop (the fused
  // outer loops) covers them all.
  std::vector<ir::IterVar> order(loops.begin(), loops.begin() + 3);
  if (yi) order.push_back(yi);
  order.push_back(loops[3]);
  order.insert(order.end(), inner.begin(), inner.end());
  order.insert(order.end(), {lv, ll});
  os.reorder(order);
  TileLoops t;
  t.at = loops[3];
  if (k.parallel == 2) {
    os.parallel(os.fuse(loops[0], loops[1]));
    t.band = loops[2];
  } else {
    t.band = os.fuse(os.fuse(loops[0], loops[1]), loops[2]);
    if (k.parallel == 1) os.parallel(t.band);
  }
  os.unroll(xi);
  os.unroll(lv);
  os.vectorize(ll);
  return t;
}

void order_tile_reduction(te::Stage& as, const TileKnobs& k, std::vector<ir::IterVar> order,
                          std::vector<ir::IterVar> reduce, const ir::IterVar& pixels) {
  auto [alv, all] = as.split(as.axis(4), k.lanes);
  if (k.k_unroll > 1) {
    auto [ko, ki] = as.split(reduce.back(), k.k_unroll);
    reduce.back() = ko;
    reduce.push_back(ki);
  }
  order.insert(order.end(), reduce.begin(), reduce.end());
  order.insert(order.end(), {pixels, alv, all});
  as.reorder(order);
  if (k.k_unroll > 1) as.unroll(reduce.back());
  if (k.unroll_kw && k.kw_axis) as.unroll(k.kw_axis);
  if (k.unroll_kh && k.kh_axis) as.unroll(k.kh_axis);
  as.unroll(pixels);
  as.unroll(alv);
  as.vectorize(all);
}

ir::IterVar schedule_register_tile(te::Schedule& sch, const te::Tensor& out, const te::Tensor& acc,
                                   const TileKnobs& k,
                                   const std::vector<ir::IterVar>& reduce_order) {
  // The tile's accumulators are computed at the innermost of the four loops.
  const TileLoops loops = schedule_tile_output(sch, out, k, 1);

  te::Stage as = sch[acc];
  as.set_scope(ir::MemScope::Local);
  as.compute_at(sch[out], loops.at);
  order_tile_reduction(as, k, {as.axis(0), as.axis(1), as.axis(2)}, reduce_order, as.axis(3));
  return loops.band;
}

std::vector<KernelArg> blocked_conv_args(const std::vector<TensorSpec>& inputs,
                                         const TensorSpec& output, const Conv2dParams& p,
                                         int64_t icb, int64_t ocb,
                                         std::function<Values(const Values&)> pack_weight,
                                         int64_t weight_elements) {
  const int64_t oh = p.out_h(), ow = p.out_w(), ob = ceil_div(p.o, ocb);
  const int64_t out_elements = p.n * ob * oh * ow * ocb;
  std::vector<KernelArg> args;
  for (const TensorSpec& s : inputs) {
    KernelArg a{s, false, nullptr, nullptr, s.elements()};
    if (s.name == "data") {
      a.pack = [p, icb](const Values& v) { return pack_nchwc(v, p.n, p.c, p.h, p.w, icb); };
      a.kernel_elements = p.n * ceil_div(p.c, icb) * p.h * p.w * icb;
    } else if (s.name == "weight") {
      a.pack = pack_weight;
      a.kernel_elements = weight_elements;
    } else if (s.name == "bias") {
      a.pack = [to = ob * ocb](const Values& v) { return pad_channels(v, to); };
      a.kernel_elements = ob * ocb;
    } else if (s.name == "residual") {
      a.pack = [p, ocb, oh, ow](const Values& v) { return pack_nchwc(v, p.n, p.o, oh, ow, ocb); };
      a.kernel_elements = out_elements;
    }
    args.push_back(a);
  }
  KernelArg out{output, true, nullptr, nullptr, out_elements};
  out.unpack = [p, ocb, oh, ow](const Values& v) { return unpack_nchwc(v, p.n, p.o, oh, ow, ocb); };
  args.push_back(out);
  return args;
}

}  // namespace kiln::schedules
