// The K-blocked register tile of conv2d.1x1 (a GEMM over flattened pixels): the
// accumulators of several pixel tiles form one block kept in a small local buffer, and the
// input channels are walked in chunks outside the block's tiles, so each chunk's weight
// panel (kc channels x the output block) is loaded into L1 once and reused by every tile of
// the block instead of being streamed again from L2/L3 per tile (what ONNX Runtime's MLAS
// pointwise kernel does with its input-channel batches). Small spatial sizes (7x7, 14x14)
// have few pixels per weight, so this reuse decides their speed.
#pragma once

#include "schedules/conv2d/blocked.h"

namespace kiln::schedules {

struct PixelBlockKnobs {
  TileKnobs tile;          // reg_n, lanes, parallel, oc_inner, k_unroll as for the plain tile
  int64_t block_tiles = 1; // register tiles (of reg_n pixels) per accumulator block
  int64_t kc_blocks = 0;   // input-channel blocks per K chunk; 0: no K chunks
};

// `out` is [N, B, 1, P, bn] and `acc` its accumulation over (rco, rci). With
// block_tiles == 1 and kc_blocks == 0 this is schedule_register_tile unchanged.
void schedule_pixel_blocks(te::Schedule& sch, const te::Tensor& out, const te::Tensor& acc,
                           const PixelBlockKnobs& k, const ir::IterVar& rco,
                           const ir::IterVar& rci);

// Register tiles per block a space offers: 1 (no block) and the counts up to the pixels.
std::vector<int64_t> block_tiles_choices(int64_t pixels);
// The fallback's tiles per block: blocks of up to 64 pixels, preferring a count that
// divides the tiles of the plane (no partial block).
int64_t pick_block_tiles(int64_t pixels, int64_t reg_n);
// K chunks in input channels a space offers: 0 (none) and the sizes below C.
std::vector<int64_t> kc_choices(int64_t channels);

// Whether an untuned network conv goes to conv2d.1x1: an f32 1x1 conv (no padding, one
// group) with a small output plane (up to 14x14 pixels, 7x7 when strided), where the pixel
// blocks, K chunks and weight streams beat conv2d.nchwc's row tiles (MobileNetV2 and
// ResNet-18, x86-avx512, 1 thread: see the 1x1 fallback and is_small_1x1).
bool is_small_1x1(const Conv2dParams& p);
bool conv2d_1x1_preferred(const Workload& w);

// Weight streams of a 1x1 kernel: the `weight_streams` knob (1 when absent), at most one
// per vector of the output block `ocb`.
int64_t weight_streams(const Config& cfg, int64_t ocb, int64_t lanes);
// Weights packed [OB, K, ocb] -> [OB, streams, K, ocb / streams]: each part of an output
// block contiguous over all input channels, so a tile reads `streams` sequential streams
// (as MLAS's NCHWc filters are), which the hardware prefetchers follow in parallel.
Values split_weight_streams(const Values& packed, int64_t ob, int64_t k, int64_t ocb,
                            int64_t streams);

}  // namespace kiln::schedules
