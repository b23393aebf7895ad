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

// 24 accumulators as 24 named registers, each step in asm: GCC 12 keeps an array of
// accumulators on the stack (a store and a reload around every instruction) and copies a
// named one before each destructive intrinsic; both held these loops to a fraction of the
// unit's rate (vpdpbusd: 200-370 GOPS where the unit does 700 on a Xeon at ~2.7 GHz).
#define KILN_24(M) \
  M(0) M(1) M(2) M(3) M(4) M(5) M(6) M(7) M(8) M(9) M(10) M(11) M(12) M(13) M(14) M(15) M(16) \
      M(17) M(18) M(19) M(20) M(21) M(22) M(23)

__attribute__((target("avx512f,avx512bf16"), noinline)) float vdpbf16ps_loop(int64_t n) {
  // Distinct starting values, so no two accumulators are one value to the optimizer.
#define KILN_DECL(i) __m512 a##i = _mm512_set1_ps(static_cast<float>(i));
  KILN_24(KILN_DECL)
#undef KILN_DECL
  __m512bh x = (__m512bh)_mm512_set1_epi16(0x3f80), y = (__m512bh)_mm512_set1_epi16(0x3c00);
  for (int64_t i = 0; i < n; ++i) {
#define KILN_STEP(i) __asm__("vdpbf16ps %1, %2, %0" : "+v"(a##i) : "v"(y), "v"(x));
    KILN_24(KILN_STEP)
#undef KILN_STEP
    __asm__ volatile("" : "+v"(x));  // keeps the loop from being folded
  }
  __m512 s = _mm512_setzero_ps();
#define KILN_SUM(i) s = _mm512_add_ps(s, a##i);
  KILN_24(KILN_SUM)
#undef KILN_SUM
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

__attribute__((target("avx512f,avx512vnni"), noinline)) int vpdpbusd_loop(int64_t n) {
#define KILN_DECL(i) __m512i a##i = _mm512_set1_epi32(i);
  KILN_24(KILN_DECL)
#undef KILN_DECL
  __m512i x = _mm512_set1_epi8(3), y = _mm512_set1_epi8(-2);
  for (int64_t i = 0; i < n; ++i) {
#define KILN_STEP(i) __asm__("vpdpbusd %1, %2, %0" : "+v"(a##i) : "v"(y), "v"(x));
    KILN_24(KILN_STEP)
#undef KILN_STEP
    __asm__ volatile("" : "+v"(x));
  }
  __m512i s = _mm512_setzero_si512();
#define KILN_SUM(i) s = _mm512_add_epi32(s, a##i);
  KILN_24(KILN_SUM)
#undef KILN_SUM
  return _mm512_reduce_add_epi32(s);
}

}  // namespace

double vpdpbusd_peak_gops() {
  if (!cpu_has("avx512vnni")) return 0;
  const int64_t n = 20'000;
  volatile int sink = 0;
  double s = best_seconds([&] { sink = sink + vpdpbusd_loop(n); });
  return static_cast<double>(n) * 24 * 64 * 2 / s / 1e9;
}

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
