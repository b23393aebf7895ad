/* Multiply-add rate of one core through the three AVX2 register tiles an int8 or f32 conv can
 * use, each 6 broadcasts x 2 vectors = 12 independent accumulators fed from L1 (the shape of
 * kiln's conv tiles): f32 FMA, kiln's exact i16 pair dot (vpmaddwd + vpaddd), and the u8 x s8
 * form (vpmaddubsw + vpmaddwd by ones + vpaddd) that saturates 16-bit pair sums.
 * It says whether int8 can beat f32 on a CPU at all: where the integer multiplies share one
 * port, no int8 tile does more multiply-adds per ns than f32 FMA's two ports.
 *
 *   cc -O2 -mavx2 -mfma bench/mac_rate.c -o mac_rate && ./mac_rate
 */
#include <immintrin.h>
#include <stdio.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static int data[4096] __attribute__((aligned(64)));
static short wts[8192] __attribute__((aligned(64)));
static float fdata[4096] __attribute__((aligned(64)));
static float fw[8192] __attribute__((aligned(64)));

/* One pair dot of a broadcast channel pair `a` and a weight vector `w` into 32-bit lanes:
 * exact i16 pairs, or u8 x s8 pairs summed in 16 bits (saturating) and then widened. */
static inline __attribute__((always_inline)) __m256i pair_dot(__m256i a, __m256i w, int saturating) {
  if (!saturating) return _mm256_madd_epi16(a, w);
  return _mm256_madd_epi16(_mm256_maddubs_epi16(a, w), _mm256_set1_epi16(1));
}

/* The integer tile for n iterations; returns seconds. The accumulators are locals, so they
 * stay in registers (through a pointer they might alias the operands and be stored back). */
static inline __attribute__((always_inline)) double int_tile(long n, int saturating, __m256i* out) {
  __m256i acc[12];
  for (int j = 0; j < 12; j++) acc[j] = out[j];
  double t0 = now();
  for (long i = 0; i < n; i++) {
    int k = (int)(i & 63) * 16;
    __m256i w0 = _mm256_load_si256((__m256i*)(wts + k * 2));
    __m256i w1 = _mm256_load_si256((__m256i*)(wts + k * 2 + 16));
#pragma GCC unroll 6
    for (int p = 0; p < 6; p++) {
      __m256i a = _mm256_set1_epi32(data[(i & 63) + p * 64]);
      acc[2 * p] = _mm256_add_epi32(acc[2 * p], pair_dot(a, w0, saturating));
      acc[2 * p + 1] = _mm256_add_epi32(acc[2 * p + 1], pair_dot(a, w1, saturating));
    }
  }
  double t = now() - t0;
  for (int j = 0; j < 12; j++) out[j] = acc[j];
  return t;
}

static __attribute__((noinline)) double i16_tile(long n, __m256i* acc) { return int_tile(n, 0, acc); }
static __attribute__((noinline)) double u8_tile(long n, __m256i* acc) { return int_tile(n, 1, acc); }

static __attribute__((noinline)) double f32_tile(long n, __m256* out) {
  __m256 f[12];
  for (int j = 0; j < 12; j++) f[j] = out[j];
  double t0 = now();
  for (long i = 0; i < n; i++) {
    int k = (int)(i & 63) * 16;
    __m256 w0 = _mm256_load_ps(fw + k), w1 = _mm256_load_ps(fw + k + 8);
#pragma GCC unroll 6
    for (int p = 0; p < 6; p++) {
      __m256 a = _mm256_set1_ps(fdata[(i & 63) + p * 64]);
      f[2 * p] = _mm256_fmadd_ps(a, w0, f[2 * p]);
      f[2 * p + 1] = _mm256_fmadd_ps(a, w1, f[2 * p + 1]);
    }
  }
  double t = now() - t0;
  for (int j = 0; j < 12; j++) out[j] = f[j];
  return t;
}

int main(void) {
  const long n = 20000000;
  for (int i = 0; i < 4096; i++) data[i] = i * 7, fdata[i] = i * 0.001f;
  for (int i = 0; i < 8192; i++) wts[i] = i % 100, fw[i] = i * 0.001f;
  __m256i acc[12] = {0};
  __m256 f[12] = {0};
  const double f32 = f32_tile(n, f), i16 = i16_tile(n, acc), u8 = u8_tile(n, acc);
  int keep = 0; /* the results are used, so no loop is optimized away */
  for (int i = 0; i < 12; i++) keep += _mm256_extract_epi32(acc[i], 0) + (int)f[i][0];
  printf("f32 FMA tile:                 %5.1f multiply-adds per ns\n", 12.0 * n * 8 / f32 / 1e9);
  printf("i16 pairs (vpmaddwd) tile:    %5.1f multiply-adds per ns\n", 12.0 * n * 16 / i16 / 1e9);
  printf("u8 x s8 (vpmaddubsw) tile:    %5.1f multiply-adds per ns  (%d)\n",
         12.0 * n * 32 / u8 / 1e9, keep & 1);
  return 0;
}
