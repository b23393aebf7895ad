#include "schedules/conv2d/pixel_blocks.h"

#include <algorithm>

namespace kiln::schedules {

std::vector<int64_t> block_tiles_choices(int64_t pixels) {
  std::vector<int64_t> out;
  for (int64_t b : {1, 2, 4, 7, 8, 14, 16})
    if (b == 1 || b < pixels) out.push_back(b);
  return out;
}

int64_t pick_block_tiles(int64_t pixels, int64_t reg_n) {
  const int64_t tiles = (pixels + reg_n - 1) / reg_n, most = std::max<int64_t>(1, 64 / reg_n);
  int64_t dividing = 1, fitting = 1;
  for (int64_t b : block_tiles_choices(pixels)) {
    if (b > most || b > tiles) continue;
    fitting = b;
    if (tiles % b == 0) dividing = b;
  }
  return dividing > 1 || tiles == 1 ? dividing : fitting;
}

std::vector<int64_t> kc_choices(int64_t channels) {
  std::vector<int64_t> out = {0};
  for (int64_t c : {64, 128, 256})
    if (c < channels) out.push_back(c);
  return out;
}

bool is_small_1x1(const Conv2dParams& p) {
  // A strided conv also pays a subsampling copy of its input: worth it at 7x7 (ResNet-18's
  // 256->512 s2: 0.109 ms against conv2d.nchwc's 0.118), not at 14x14 (128->256 s2: 0.089
  // against 0.081; x86-avx512, 1 thread, in the network).
  const int64_t most = p.sh == 1 && p.sw == 1 ? 196 : 49;
  return p.kh == 1 && p.kw == 1 && p.ph == 0 && p.pw == 0 && p.groups == 1 &&
         p.out_h() * p.out_w() <= most;
}

bool conv2d_1x1_preferred(const Workload& w) {
  // f32 only: the half forms have their own templates (and an f32 output where the graph
  // keeps one), and only f32 was measured.
  return w.op == "conv2d" && w.dtype == ir::DataType::f32() && is_small_1x1(conv2d_params(w));
}

int64_t weight_streams(const Config& cfg, int64_t ocb, int64_t lanes) {
  const int64_t want = cfg.has("weight_streams") ? cfg["weight_streams"] : 1;
  int64_t streams = 1;
  while (streams * 2 <= want && ocb % (streams * 2 * lanes) == 0) streams *= 2;
  return streams;
}

Values split_weight_streams(const Values& packed, int64_t ob, int64_t k, int64_t ocb,
                            int64_t streams) {
  if (streams == 1) return packed;
  const int64_t sw = ocb / streams;
  Values out(packed.size());
  for (int64_t b = 0; b < ob; ++b)
    for (int64_t c = 0; c < k; ++c)
      for (int64_t o = 0; o < ocb; ++o)
        out[((b * streams + o / sw) * k + c) * sw + o % sw] = packed[(b * k + c) * ocb + o];
  return out;
}

void schedule_pixel_blocks(te::Schedule& sch, const te::Tensor& out, const te::Tensor& acc,
                           const PixelBlockKnobs& k, const ir::IterVar& rco,
                           const ir::IterVar& rci) {
  if (k.block_tiles <= 1 && k.kc_blocks <= 0) {
    schedule_register_tile(sch, out, acc, k.tile, {rco, rci});
    return;
  }
  const TileKnobs& t = k.tile;
  // The block's accumulators are computed at the block loop; the epilogue then walks the
  // block tile by tile.
  const ir::IterVar at = schedule_tile_output(sch, out, t, std::max<int64_t>(k.block_tiles, 1)).at;
  te::Stage os = sch[out];

  te::Stage as = sch[acc];
  as.set_scope(ir::MemScope::Local);
  as.compute_at(os, at);
  auto [ro, ri] = as.split(as.axis(3), t.reg_n);
  // n, b, y (one each inside the block), then [K chunk], tile, the chunk's channel blocks,
  // the block's channels, and the register tile innermost.
  std::vector<ir::IterVar> order = {as.axis(0), as.axis(1), as.axis(2)};
  ir::IterVar outer_k = rco;
  if (k.kc_blocks > 0) {
    auto [ko, ki] = as.split(rco, k.kc_blocks);
    order.push_back(ko);
    outer_k = ki;
  }
  order.push_back(ro);
  order_tile_reduction(as, t, order, {outer_k, rci}, ri);
}

}  // namespace kiln::schedules
