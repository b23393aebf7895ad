// What one parallel region costs: kiln's ThreadPool::parallel_for against OpenMP (libgomp, what
// oneDNN and OpenBLAS builds use) on the same machine, back to back as a network's layers run.
//
// Each region splits `extent` iterations over the threads; a body either does nothing (the pure
// hand-off) or spins for a fixed time per chunk (a small layer). Printed per region: the wall
// time less the work, the median over rounds, for both, and their ratio.
//
//   pool_bench [--threads 2] [--regions 20000] [--rounds 7]
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "kiln/runtime.h"

namespace {

using Clock = std::chrono::steady_clock;

// Spins for `ns` nanoseconds: a stand-in for a small layer's chunk of work.
void spin_for(int64_t ns) {
  if (ns <= 0) return;
  const auto end = Clock::now() + std::chrono::nanoseconds(ns);
  while (Clock::now() < end) {
  }
}

int64_t g_work_ns = 0;

int32_t body(int64_t, int64_t, void*) {
  spin_for(g_work_ns);
  return 0;
}

double kiln_us(kiln::ThreadPool& pool, int regions, int extent) {
  const auto t0 = Clock::now();
  for (int r = 0; r < regions; ++r) pool.parallel_for(extent, body, nullptr);
  return std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / regions;
}

double openmp_us(int threads, int regions, int extent) {
  const auto t0 = Clock::now();
  for (int r = 0; r < regions; ++r) {
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int i = 0; i < threads; ++i)
      body(i * extent / threads, (i + 1) * extent / threads, nullptr);
  }
  return std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / regions;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int threads = 2, regions = 20000, rounds = 7;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--threads"))
      threads = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--regions"))
      regions = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--rounds"))
      rounds = std::atoi(argv[i + 1]);
    else {
      std::fprintf(stderr, "usage: pool_bench [--threads T] [--regions N] [--rounds R]\n");
      return 2;
    }
  }
  kiln::ThreadPool pool(threads);
  std::printf(
      "%d threads, %d regions per round, median of %d rounds; per region, less the work\n\n",
      threads, regions, rounds);
  std::printf("| work per chunk | kiln us | OpenMP us | kiln / OpenMP |\n|---|---|---|---|\n");
  for (int64_t work : {0, 1000, 5000}) {
    g_work_ns = work;
    std::vector<double> k, o;
    for (int r = 0; r < rounds; ++r) {
      k.push_back(kiln_us(pool, regions, threads) - work / 1e3);
      o.push_back(openmp_us(threads, regions, threads) - work / 1e3);
    }
    std::printf("| %.1f us | %.3f | %.3f | %.2f |\n", work / 1e3, median(k), median(o),
                median(k) / median(o));
  }
  return 0;
}
