// Per-loop-level statistics of a lowered kernel: the cost model's structured features,
// before ir_features.h flattens them into a fixed-length vector.
//
// The levels are the kernel's main loop chain: from the top of the kernel, each level is
// the loop (among the siblings at that depth) that executes the most work (flops plus
// memory accesses), so for a tiled matmul it runs through the tile loops down to the
// reduction loop, not into the tile's initialisation or write-back. Loops off the chain
// still count in the kernel totals.
//
// For each level and each buffer accessed inside it, the numbers describe ONE full run of
// that loop (all its iterations, nested loops included), as AutoTVM's itervar features do:
// how many accesses, how far the index moves per iteration, how many distinct bytes are
// touched and how often each is reused.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cost_model/loop_tree.h"

namespace kiln::cost_model {

struct LevelBufferStats {
  bool accessed = false;  // some access of the buffer lies inside the loop
  double accesses = 0;    // access instructions executed (a vector access is one)
  // Elements the index moves per iteration of this loop (0: the access stays put, so it is
  // reused across the loop); NaN when the index is not affine in the loop variable. Both
  // strides come from the buffer's most executed access inside the loop.
  double loop_stride = 0;
  // The access's own stride: between the lanes of a vector access (1: contiguous), or
  // along the access's innermost enclosing loop for a scalar one; NaN for a gather.
  double innermost_stride = 0;
  double touched_bytes = 0;  // distinct bytes of the buffer touched
  double reuse = 0;          // bytes accessed / touched bytes
};

struct LoopLevel {
  std::string var;
  int64_t extent = 1;
  ir::ForKind kind = ir::ForKind::Serial;
  int64_t body_stores = 0;  // stores directly in its body: unrolled copies show here
  double trips = 0;         // iterations over the whole kernel (runs of the loop * extent)
  std::vector<LevelBufferStats> buffers;  // indexed like LoopNestSummary::buffers
};

struct LoopNestSummary {
  std::vector<BufferInfo> buffers;  // arguments in call order, then allocated buffers
  std::vector<LoopLevel> levels;    // the main loop chain, outermost first, all of it
  KernelTotals totals;
};

LoopNestSummary summarize_loop_nest(const ir::LoweredFunc& f);

}  // namespace kiln::cost_model
