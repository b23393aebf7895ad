#include "tools/roofline.h"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#elif defined(__aarch64__)
#include <arm_neon.h>
#endif

#include "kiln/cpu_features.h"
#include "kiln/runtime.h"
#include "tools/write_file.h"

namespace kiln::tools {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// kAcc independent accumulator chains: more than the FMA latency times the FMA ports (4 x 2
// on current cores), so the loop runs at the FMA units' throughput. Intrinsics, not vector
// extensions, so the multiply-add is one fused instruction whatever -ffp-contract says.
constexpr int kAcc = 12;
constexpr long kIters = 1 << 21;

#if defined(__x86_64__)
#define KILN_FMA_CHAINS(VEC, SET1, FMA, FIRST)                               \
  VEC acc[kAcc];                                                          \
  const VEC a = SET1(scale), b = SET1(1e-7f);                             \
  for (int i = 0; i < kAcc; ++i) acc[i] = SET1(float(i));                 \
  for (long it = 0; it < kIters; ++it) {                                  \
    _Pragma("GCC unroll 12") for (int i = 0; i < kAcc; ++i) acc[i] = FMA(acc[i], a, b); \
  }                                                                       \
  float sum = 0;                                                          \
  for (int i = 0; i < kAcc; ++i) sum += FIRST(acc[i]);                    \
  return sum;

__attribute__((target("avx512f,fma"))) float chains_avx512(float scale) {
  KILN_FMA_CHAINS(__m512, _mm512_set1_ps, _mm512_fmadd_ps, _mm512_cvtss_f32)
}
__attribute__((target("avx2,fma"))) float chains_avx2(float scale) {
  KILN_FMA_CHAINS(__m256, _mm256_set1_ps, _mm256_fmadd_ps, _mm256_cvtss_f32)
}
float chains_sse(float scale) {
  // No FMA before AVX2-era cores: a multiply and an add, counted as two operations as well.
  auto mul_add = [](__m128 x, __m128 y, __m128 z) { return _mm_add_ps(_mm_mul_ps(x, y), z); };
  KILN_FMA_CHAINS(__m128, _mm_set1_ps, mul_add, _mm_cvtss_f32)
}
#elif defined(__aarch64__)
float chains_neon(float scale) {
  float32x4_t acc[kAcc];
  const float32x4_t a = vdupq_n_f32(scale), b = vdupq_n_f32(1e-7f);
  for (int i = 0; i < kAcc; ++i) acc[i] = vdupq_n_f32(float(i));
  for (long it = 0; it < kIters; ++it) {
#pragma GCC unroll 12
    for (int i = 0; i < kAcc; ++i) acc[i] = vfmaq_f32(b, acc[i], a);
  }
  float sum = 0;
  for (int i = 0; i < kAcc; ++i) sum += vgetq_lane_f32(acc[i], 0);
  return sum;
}
#endif

// One thread's FMA loop: returns the floating-point operations it did (the sum keeps the
// compiler from dropping the work).
double run_chains(volatile float* sink) {
  int lanes = 4;
  float s = 0;
#if defined(__x86_64__)
  if (cpu_has("avx512f")) {
    s = chains_avx512(0.999999f), lanes = 16;
  } else if (cpu_has("avx2") && cpu_has("fma")) {
    s = chains_avx2(0.999999f), lanes = 8;
  } else {
    s = chains_sse(0.999999f);
  }
#elif defined(__aarch64__)
  s = chains_neon(0.999999f);
#endif
  *sink = s;
  return 2.0 * lanes * kAcc * static_cast<double>(kIters);
}

// Best of three runs of `work` on `threads` threads: work returns how many units it did,
// the result is units per second.
template <typename Work>
double best_rate(int threads, Work work) {
  double best = 0;
  for (int rep = 0; rep < 3; ++rep) {
    std::vector<double> units(threads);
    auto t0 = Clock::now();
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) pool.emplace_back([&, t] { units[t] = work(t); });
    for (std::thread& th : pool) th.join();
    double s = std::chrono::duration<double>(Clock::now() - t0).count();
    double total = 0;
    for (double u : units) total += u;
    best = std::max(best, total / s);
  }
  return best;
}

// Sums n floats (n a multiple of 64) with four independent vector accumulators: the loop is
// bound by the loads, which is what a read-bandwidth probe wants.
#if defined(__x86_64__)
__attribute__((target("avx512f"))) float read_sum_avx512(const float* p, size_t n) {
  __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
  for (size_t i = 0; i < n; i += 64) {
    a0 = _mm512_add_ps(a0, _mm512_loadu_ps(p + i));
    a1 = _mm512_add_ps(a1, _mm512_loadu_ps(p + i + 16));
    a2 = _mm512_add_ps(a2, _mm512_loadu_ps(p + i + 32));
    a3 = _mm512_add_ps(a3, _mm512_loadu_ps(p + i + 48));
  }
  return _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)));
}
#endif
float read_sum(const float* p, size_t n) {
#if defined(__x86_64__)
  if (cpu_has("avx512f")) return read_sum_avx512(p, n);
#endif
  float acc[16] = {};  // independent partial sums the compiler vectorises
  for (size_t i = 0; i < n; i += 16)
    for (int l = 0; l < 16; ++l) acc[l] += p[i + l];
  float sum = 0;
  for (float a : acc) sum += a;
  return sum;
}

// Streaming read of the buffer split over `threads` threads, in bytes per second.
double read_bandwidth(const std::vector<float>& buffer, int threads) {
  std::vector<float> sinks(threads);
  const size_t per = buffer.size() / threads / 64 * 64;
  return best_rate(threads, [&](int t) {
    sinks[t] = read_sum(buffer.data() + t * per, per);
    return static_cast<double>(per * sizeof(float));
  });
}

std::string cpu_model_name() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("model name", 0) == 0 || line.rfind("CPU part", 0) == 0) {
      size_t colon = line.find(':');
      if (colon != std::string::npos) return line.substr(colon + 2);
    }
  }
  return "unknown cpu";
}

fs::path cache_file() {
  if (const char* d = std::getenv("KILN_CACHE_DIR"); d && *d) return fs::path(d) / "roofline.json";
  if (const char* d = std::getenv("XDG_CACHE_HOME"); d && *d)
    return fs::path(d) / "kiln" / "roofline.json";
  const char* home = std::getenv("HOME");
  return fs::path(home && *home ? home : ".") / ".cache" / "kiln" / "roofline.json";
}

nlohmann::json to_json(const Roofline& r) {
  return {{"cpu", r.cpu},
          {"threads", r.threads},
          {"peak_gflops_1t", r.peak_gflops_1t},
          {"peak_gflops", r.peak_gflops},
          {"bandwidth_gbs_1t", r.bandwidth_gbs_1t},
          {"bandwidth_gbs", r.bandwidth_gbs}};
}

}  // namespace

Roofline measure_roofline() {
  Roofline r;
  r.cpu = cpu_model_name();
  r.threads = std::max(1, default_num_threads());
  volatile float sink = 0;
  auto flops = [&](int) { return run_chains(&sink); };
  r.peak_gflops_1t = best_rate(1, flops) / 1e9;
  r.peak_gflops = best_rate(r.threads, flops) / 1e9;
  // 256 MiB: far past any last-level cache of the machines kiln targets.
  std::vector<float> buffer((size_t(256) << 20) / sizeof(float), 1.0f);
  r.bandwidth_gbs_1t = read_bandwidth(buffer, 1) / 1e9;
  r.bandwidth_gbs = read_bandwidth(buffer, r.threads) / 1e9;
  return r;
}

Roofline machine_roofline(bool remeasure) {
  const fs::path path = cache_file();
  const std::string cpu = cpu_model_name();
  const int threads = std::max(1, default_num_threads());
  if (!remeasure) {
    std::ifstream f(path);
    nlohmann::json j = nlohmann::json::parse(f, nullptr, false);
    if (!j.is_discarded() && j.is_object() && j.value("cpu", "") == cpu &&
        j.value("threads", 0) == threads && j.value("peak_gflops_1t", 0.0) > 0) {
      Roofline r;
      r.cpu = cpu;
      r.threads = threads;
      r.peak_gflops_1t = j.value("peak_gflops_1t", 0.0);
      r.peak_gflops = j.value("peak_gflops", 0.0);
      r.bandwidth_gbs_1t = j.value("bandwidth_gbs_1t", 0.0);
      r.bandwidth_gbs = j.value("bandwidth_gbs", 0.0);
      return r;
    }
  }
  Roofline r = measure_roofline();
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  try {
    write_file_atomically(path.string(), to_json(r).dump(2) + "\n");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kiln: warning: roofline figures not cached: %s\n", e.what());
  }
  return r;
}

}  // namespace kiln::tools
