// The machine's roofline: the peak floating-point rate and the main-memory bandwidth that
// `kiln report` draws each layer against. Measured by a small probe (about a second) the first
// time and cached per machine, since neither changes between runs.
//
// Peak: independent fused multiply-add chains in the widest vector registers the CPU has
// (AVX-512, AVX2+FMA, or NEON), enough of them to cover the FMA latency, on 1 thread and on
// every thread. Bandwidth: a streaming read of a buffer far larger than the caches.
#pragma once

#include <string>

namespace kiln::tools {

struct Roofline {
  std::string cpu;              // the CPU's model name, the cache key
  int threads = 1;              // the threads of the multi-thread figures
  double peak_gflops_1t = 0;    // f32, one thread
  double peak_gflops = 0;       // f32, `threads` threads
  double bandwidth_gbs_1t = 0;  // read bandwidth, one thread
  double bandwidth_gbs = 0;     // read bandwidth, `threads` threads

  double peak_for(int t) const { return t <= 1 ? peak_gflops_1t : peak_gflops; }
  double bandwidth_for(int t) const { return t <= 1 ? bandwidth_gbs_1t : bandwidth_gbs; }
};

// Runs the probe now (about a second).
Roofline measure_roofline();

// The cached figures for this machine, measuring and caching them when there are none (or
// when `remeasure`). The cache is roofline.json in $KILN_CACHE_DIR, else
// $XDG_CACHE_HOME/kiln, else ~/.cache/kiln; a cache that cannot be written is only a warning.
Roofline machine_roofline(bool remeasure = false);

}  // namespace kiln::tools
