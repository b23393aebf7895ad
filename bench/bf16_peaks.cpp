#include "bench/bf16_peaks.h"

#include <immintrin.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>

#include "kiln/cpu_features.h"
#include "kiln/timing.h"

namespace kiln::bench {

namespace {

template <typename F>
double best_seconds(F run) {
  // The best of many short runs (each well under a scheduler time slice): on a shared machine
  // the best one is the least disturbed.
  kiln::TimingOptions o;
  o.repeat = 300;
  return kiln::time_calls(run, o).best();
}

__attribute__((target("avx512f,avx512bf16"), noinline)) float vdpbf16ps_loop(int64_t n) {
  // Distinct starting values: accumulators that all start at zero and add the same products
  // are one value to the optimizer, and GCC 12 kept a single vdpbf16ps in the loop (a latency
  // chain it then counted 24 times: 360-700 "GFLOPS" where the unit does ~120).
  __m512 acc[24];
  for (int i = 0; i < 24; ++i) acc[i] = _mm512_set1_ps(static_cast<float>(i));
  __m512bh x = (__m512bh)_mm512_set1_epi16(0x3f80), y = (__m512bh)_mm512_set1_epi16(0x3c00);
  for (int64_t i = 0; i < n; ++i) {
#pragma GCC unroll 24
    for (auto& a : acc) a = _mm512_dpbf16_ps(a, x, y);
    __asm__ volatile("" : "+v"(x));  // keeps the loop from being folded
  }
  __m512 s = acc[0];
  for (int i = 1; i < 24; ++i) s = _mm512_add_ps(s, acc[i]);
  return _mm512_reduce_add_ps(s);
}

__attribute__((target("amx-tile,amx-bf16"), noinline)) void tdpbf16ps_loop(int64_t n) {
  // Palette 1: bytes 16 + 2t hold tile t's bytes per row, byte 48 + t its rows.
  alignas(64) uint8_t cfg[64] = {1};
  for (int t = 0; t < 8; ++t) cfg[16 + 2 * t] = 64, cfg[48 + t] = 16;
  // GCC 12's _tile_loadconfig does not tell the optimizer it reads the bytes: keep them.
  __asm__ volatile("" : : "r"(cfg) : "memory");
  _tile_loadconfig(cfg);
  alignas(64) static uint16_t ones[16 * 32];
  for (auto& v : ones) v = 0x3c00;  // a small bf16, so nothing overflows
  _tile_zero(0);  // tile numbers are immediates: one statement each
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  _tile_zero(4);
  _tile_zero(5);
  _tile_loadd(6, ones, 64);
  _tile_loadd(7, ones, 64);
  for (int64_t i = 0; i < n; ++i) {
    _tile_dpbf16ps(0, 6, 7);
    _tile_dpbf16ps(1, 6, 7);
    _tile_dpbf16ps(2, 6, 7);
    _tile_dpbf16ps(3, 6, 7);
    _tile_dpbf16ps(4, 6, 7);
    _tile_dpbf16ps(5, 6, 7);
  }
  _tile_release();
}

}  // namespace

double vdpbf16ps_peak_gflops() {
  if (!cpu_has("avx512bf16")) return 0;
  const int64_t n = 20'000;  // ~0.25 ms
  volatile float sink = 0;
  double s = best_seconds([&] { sink = sink + vdpbf16ps_loop(n); });
  return static_cast<double>(n) * 24 * 64 / s / 1e9;
}

double amx_bf16_peak_gflops() {
  if (!cpu_has("amx-tile") || !cpu_has("amx-bf16")) return 0;
  constexpr long kArchReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
  if (syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) != 0) return 0;
  const int64_t n = 5'000;  // ~0.15 ms
  double s = best_seconds([&] { tdpbf16ps_loop(n); });
  return static_cast<double>(n) * 6 * 16 * 16 * 32 * 2 / s / 1e9;
}

}  // namespace kiln::bench
