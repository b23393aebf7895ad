// When a fallback config runs a kernel on the thread pool: the one cost rule the templates share.
//
// Back to back (a network's steps), a parallel region costs 0.1-0.4 us empty and 0.6-0.9 us with
// work at 2 threads (bench/pool_bench.cpp: the pool's workers spin between regions), against
// 0.7-1.1 us for OpenMP. A kernel of kParallelMinFlops takes ~8 us on one core at the 25-30
// GFLOPS kiln's small GEMMs reach, so splitting it pays from there on; at the former 2 MFLOP a
// chain of [8,256]x[256,256] layers (1 MFLOP, 36 us each) ran on one thread at 2 threads
// (bench/dispatch_bench.py, `wide`: 31 us per step, 1.13x ONNX Runtime; now 21 us, 0.81x).
#pragma once

namespace kiln::schedules {

inline constexpr double kParallelMinFlops = 2.5e5;

inline bool worth_parallel(double flops) {
  return flops > kParallelMinFlops;
}

}  // namespace kiln::schedules
