// Pieces shared by the conv2d templates that work on the blocked NCHW[x]c layout
// (conv2d.nchwc, conv2d.1x1, conv2d.depthwise and the bf16/f16 ones): the knob choices and
// fallback picks for register tiles and channel blocks, the zero-padded input copy (whole, or
// per band of output rows), the schedule of such copy stages, and the description of their
// blocked kernel arguments.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "schedules/conv2d/common.h"
#include "compiler/te/schedule.h"

namespace kiln::schedules {

// Register-tile widths (output pixels along W) a space offers, up to `extent` and `widest`.
std::vector<int64_t> reg_n_choices(int64_t extent, int64_t widest = 16);
// The widest such tile within `max_r`, preferring one that divides `extent` (no partial
// tile) if it is at least half as wide.
int64_t pick_reg_n(int64_t extent, int64_t max_r, int64_t widest = 16);

// Output-channel blocks: 1, 2 or 4 vectors of `lanes`, as far as the channels fill them.
std::vector<int64_t> oc_bn_choices(int64_t channels, int64_t lanes);

// Input-channel blocks: powers of two up to C (rounded up), plus C itself when small, so a
// 3-channel image stays one unpadded block. `even` keeps only even blocks (bf16 channel
// pairs), with C rounded up to even.
std::vector<int64_t> ic_bn_choices(int64_t c, bool even = false);
// The fallback's block: the largest power of two up to `cap` dividing C if at least 4,
// else C when small, else min(cap, 16).
int64_t pick_ic_bn(int64_t c, int64_t cap, bool even = false);

// The zero-padded copy of blocked data [N, CB, H, W, bn]: computed once at the root, so the
// convolution's inner loop reads it without bounds checks. Identity when there is no pad.
te::Tensor pad_blocked(const te::Tensor& data, const Conv2dParams& p, ir::DataType dtype);

// A root stage that copies data (pad, subsample): parallel over its outer axes, vectorized
// along its channel block, or, given the target's `lanes`, along W in blocks of one channel.
void schedule_copy_stage(te::Schedule& sch, const te::Tensor& t, bool parallel, int64_t lanes = 0);

// The knob "pad_rows" of a template whose input is padded (none without padding): where
// the zero-padded copy of the input (pad_blocked) is computed. 0: once for the whole input
// at the root (the legacy schedule): the copy goes to memory and is read back, which costs
// a memory-bound conv (depthwise) more than its own work. R > 0: per band of R output rows
// (TileKnobs::band_rows), into a small buffer that stays in cache: the input is read
// once, at the cost of copying again the input rows that neighbouring bands share.
void define_pad_knob(ConfigSpace& cs, const Conv2dParams& p);
// Input rows a band of `rows` output rows reads.
int64_t band_input_rows(const Conv2dParams& p, int64_t rows);
// The fallback's band: one output row for a strided conv, else the most output rows (up to
// 8) whose padded input rows of one channel block of `block` elements of `bytes` fit in
// `budget` bytes.
int64_t pick_pad_rows(const Conv2dParams& p, int64_t block, int64_t bytes, int64_t budget);

// The knobs of the register tile the blocked templates share (schedule_register_tile).
struct TileKnobs {
  int64_t reg_n, lanes;
  // 0: serial; 1: the loops outside the tile's fused and parallel (fine chunks); 2: only
  // the outer two of them (coarse chunks: less scheduling, worse balance).
  int64_t parallel = 0;
  // Where the output-block loop B sits: 0 outermost but N (n, b, y, xo: weights reused
  // across a whole plane), 1 inside the rows (n, y, b, xo), 2 inside the W tiles
  // (n, y, xo, b: the input tile reused from L1 by every output block).
  int64_t oc_inner = 0;
  bool unroll_kw = false, unroll_kh = false;
  int64_t k_unroll = 1;  // split of the innermost reduction axis, unrolled
  ir::IterVar kh_axis, kw_axis;
  int64_t band_rows = 1;  // output rows per iteration of the band loop (a split of Y)
};

// The loop-order and parallel knobs the blocked templates share (see TileKnobs).
void define_tile_loop_knobs(ConfigSpace& cs);

// Unroll choices for the kernel-height loop: {0, 1} where there is one to unroll, else {0}.
std::vector<int64_t> unroll_kh_choices(const Conv2dParams& p);

// The output side of the register tile: `out`'s loops N, B, Y and X split by reg_n (and the
// tiles grouped in blocks of `block_tiles` when > 1) in the order oc_inner asks, the outer
// ones fused (and parallel), the tile unrolled and the block vectorized; Y split in bands
// of k.band_rows rows. Returns the loop the accumulators are computed at (the tile's, or the
// block's) and the band loop (see schedule_register_tile).
struct TileLoops {
  ir::IterVar at, band;
};
TileLoops schedule_tile_output(te::Schedule& sch, const te::Tensor& out, const TileKnobs& k,
                               int64_t block_tiles);

// The innermost loops of a register tile's accumulation stage `as` ([N, B, Y, X, bn]): the
// loops `order` outermost, then the reduction `reduce` (its innermost loop split by
// k.k_unroll and unrolled), then the tile's pixels `pixels` (unrolled) and the block's
// vectors (unrolled) and lanes (vectorized); KH/KW unrolled where the knobs ask. The row,
// plane and pixel-block tiles differ only in what they put in `order`.
void order_tile_reduction(te::Stage& as, const TileKnobs& k, std::vector<ir::IterVar> order,
                          std::vector<ir::IterVar> reduce, const ir::IterVar& pixels);

// The register tile. `out` is [N, B, Y, X, bn] (the epilogue stage), `acc` its
// accumulation: output loops N, B, Y and X split by reg_n in the order oc_inner asks, the
// outer ones fused (and parallel); the accumulators of one reg_n x bn tile live in
// registers (a Local stage computed at the tile) over the whole reduction (`reduce_order`,
// outermost first), X unrolled and the block vectorized in the innermost loops.
// Returns the band loop: the loop just outside the band's rows and the tile's innermost
// outer loop (the fused N, B, Y/band_rows loop for oc_inner 0), where a stage the tile
// reads per band of rows can attach.
ir::IterVar schedule_register_tile(te::Schedule& sch, const te::Tensor& out,
                                   const te::Tensor& acc, const TileKnobs& k,
                                   const std::vector<ir::IterVar>& reduce_order);

// The most bytes of a band's padded input kept on the stack (see schedule_pad_stage).
constexpr int64_t kMaxLocalPadBytes = 256 << 10;

// Schedules the padded copy `padded` of a template whose output stage is `out` (tiled with
// `k`) as the knob pad_rows asks; `band` is schedule_register_tile's band loop. A band
// computes into a stack buffer up to kMaxLocalPadBytes, else into the workspace.
void schedule_pad_stage(te::Schedule& sch, const te::Tensor& padded, const te::Tensor& out,
                        ir::IterVar band, int64_t pad_rows, const TileKnobs& k,
                        const Conv2dParams& p);

// The arguments of a blocked conv2d kernel (data, weight, the epilogue's inputs, out) with
// their logical specs `inputs` and `output` outside: data packed to NCHW[icb]c, weights by
// `pack_weight` into `weight_elements`, bias padded to whole output blocks, residual and
// output in NCHW[ocb]c.
std::vector<KernelArg> blocked_conv_args(const std::vector<TensorSpec>& inputs,
                                         const TensorSpec& output, const Conv2dParams& p,
                                         int64_t icb, int64_t ocb,
                                         std::function<Values(const Values&)> pack_weight,
                                         int64_t weight_elements);

}  // namespace kiln::schedules
