// How many timed repeats a candidate gets. A kernel spread over a thread pool is timed at the
// mercy of every other process on the machine: on a 2-core machine shared with builds, one
// 2-thread timing swings by 2x where a 1-thread timing moves by a few percent. So the repeats
// grow with the threads a candidate really runs on, and its mean and median come from enough
// samples to rank it.
//
// The rule: a candidate on one thread gets the base repeats; on T > 1 threads it gets
// base * (1 + 2 * ceil(log2 T)): 3x on 2 threads, 5x on 3-4, 7x on 5-8, 9x on 9-16,
// and never more than kMaxRepeats.
#pragma once

#include <cstdint>

#include "compiler/ir/lowered_func.h"

namespace kiln::tuner {

inline constexpr uint32_t kMaxRepeats = 1000;

// The threads `func` runs on with a pool of `pool_threads`: the pool when the kernel has a
// parallel loop, one otherwise (a serial kernel leaves the pool idle).
uint32_t candidate_threads(const ir::LoweredFunc& func, uint32_t pool_threads);

// The repeats of a candidate on `threads` threads, from the base number for one thread.
uint32_t repeats_for_threads(uint32_t base, uint32_t threads);

}  // namespace kiln::tuner
