// Half-precision accumulation with f32 partial sums: the reduction of an f16 template split
// in two levels. Inside a K block the products accumulate in f16 lanes (AArch64 `fmla .8h`,
// 8 lanes per instruction, twice f32's), and each block's sum is widened and added into f32
// accumulators. The f16 rounding error then grows with the block size, not with the whole
// reduction, so long reductions (a 3x3 conv over 512 channels is K = 4608) keep f16's
// tolerance while the inner loop runs at f16 speed. dense.f16.arm and conv2d.f16.arm use it
// (their knob f16_acc = 2, the fallback), and conv2d.winograd's f16 batched GEMM.
//
//   part[spatial..., outer...] = Σ_inner  product(spatial, outer, inner)     (f16)
//   acc [spatial...]           = Σ_outer  f32(part[spatial..., outer...])    (f32)
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "compiler/te/schedule.h"

namespace kiln::schedules {

// How a template's f16 reduction accumulates (its knob f16_acc).
enum class F16AccKind : int64_t {
  F32 = 0,       // every product into f32 (the f32 lanes halve the throughput)
  F16 = 1,       // all of K in f16 (fastest; error grows like sqrt(K) half-ulps)
  F16Blocks = 2, // f16 within a K block, f32 across blocks (this file)
};
F16AccKind f16_acc_kind(int64_t knob);  // UserError naming the valid values

struct F16PartialSums {
  te::Tensor part;  // f16 [spatial..., outer...]
  te::Tensor acc;   // f32 [spatial...]
  std::vector<ir::IterVar> outer;  // acc's reduce axes, outermost first
  std::vector<ir::IterVar> inner;  // part's reduce axes, outermost first
};

// A reduction over axes of `extents` (outermost first); the last `inner_count` of them sum
// in f16 into `part`, the others in f32 into `acc`. `product` gives the f16 term at
// (spatial indices, one index per reduce axis in the order of `extents`).
F16PartialSums f16_partial_sums(
    const std::vector<int64_t>& spatial, const std::vector<int64_t>& extents,
    const std::vector<std::string>& names, size_t inner_count,
    const std::function<ir::Expr(const std::vector<ir::Expr>&, const std::vector<ir::Expr>&)>&
        product,
    const std::string& name);

// Schedules `part` inside acc's innermost reduce loop (acc already at its register tile):
// a Local buffer of one block's f16 accumulators, the same tile as acc's. `part`'s last two
// spatial axes are the tile's rows and its vectorized axis (split by `lanes`); its other
// spatial axes and the block indices have extent 1 there. The innermost inner axis is split
// by `k_unroll` (> 1) and unrolled; `unroll` names further inner axes to unroll.
void schedule_f16_partial_sums(te::Schedule& sch, const F16PartialSums& p, int64_t lanes,
                               int64_t k_unroll, const std::vector<ir::IterVar>& unroll = {});

}  // namespace kiln::schedules
