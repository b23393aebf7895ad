#include "kiln/cpu_features.h"

#include <algorithm>

#if defined(__x86_64__)
#include <cpuid.h>
#elif defined(__aarch64__)
#include <sys/auxv.h>
#endif

namespace kiln {

namespace {

struct Probe {
  std::vector<std::string> known, present;
  void add(const char* name, bool has) {
    known.emplace_back(name);
    if (has) present.emplace_back(name);
  }
};

#if defined(__x86_64__)
// XCR0: which register state the OS saves on a context switch. A CPU may have AVX-512 while
// the OS (or a hypervisor) leaves zmm state off; the instructions then fault.
uint64_t xcr0() {
  uint32_t lo = 0, hi = 0;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (static_cast<uint64_t>(hi) << 32) | lo;
}

Probe probe() {
  Probe p;
  unsigned a = 0, b = 0, c = 0, d = 0;
  __cpuid(0, a, b, c, d);
  const unsigned max_leaf = a;
  unsigned c1 = 0;
  if (max_leaf >= 1) __cpuid(1, a, b, c1, d);
  const bool osxsave = c1 & (1u << 27);
  const uint64_t state = osxsave ? xcr0() : 0;
  const bool avx_state = (state & 0x6) == 0x6;     // xmm + ymm
  const bool zmm_state = (state & 0xe6) == 0xe6;   // + opmask, zmm upper halves, zmm16-31
  const bool amx_state = (state & 0x60000) == 0x60000;  // tile config + tile data
  unsigned b7 = 0, c7 = 0, d7 = 0, a71 = 0;
  if (max_leaf >= 7) {
    __cpuid_count(7, 0, a, b7, c7, d7);
    unsigned x = 0, y = 0, z = 0;
    __cpuid_count(7, 1, a71, x, y, z);
  }
  const bool avx = avx_state && (c1 & (1u << 28));
  p.add("avx", avx);
  p.add("fma", avx && (c1 & (1u << 12)));
  p.add("f16c", avx && (c1 & (1u << 29)));
  p.add("avx2", avx && (b7 & (1u << 5)));
  p.add("avxvnni", avx && (a71 & (1u << 4)));
  p.add("avx512f", zmm_state && (b7 & (1u << 16)));
  p.add("avx512dq", zmm_state && (b7 & (1u << 17)));
  p.add("avx512cd", zmm_state && (b7 & (1u << 28)));
  p.add("avx512bw", zmm_state && (b7 & (1u << 30)));
  p.add("avx512vl", zmm_state && (b7 & (1u << 31)));
  p.add("avx512vnni", zmm_state && (c7 & (1u << 11)));
  p.add("avx512bf16", zmm_state && (a71 & (1u << 5)));
  p.add("avx512fp16", zmm_state && (d7 & (1u << 23)));
  p.add("amx-tile", amx_state && (d7 & (1u << 24)));
  p.add("amx-bf16", amx_state && (d7 & (1u << 22)));
  p.add("amx-int8", amx_state && (d7 & (1u << 25)));
  return p;
}
#elif defined(__aarch64__)
Probe probe() {
  // Bit positions of the Linux arm64 ABI (asm/hwcap.h), spelled out so a cross build needs
  // no particular kernel headers.
  const unsigned long hw = getauxval(AT_HWCAP), hw2 = getauxval(AT_HWCAP2);
  Probe p;
  p.add("neon", hw & (1ul << 1));                                // ASIMD
  p.add("fullfp16", (hw & (1ul << 9)) && (hw & (1ul << 10)));   // FPHP + ASIMDHP
  p.add("dotprod", hw & (1ul << 20));                            // ASIMDDP
  p.add("sve", hw & (1ul << 22));
  p.add("i8mm", hw2 & (1ul << 13));
  p.add("bf16", hw2 & (1ul << 14));
  return p;
}
#else
Probe probe() {
  return {};
}
#endif

const Probe& probed() {
  static const Probe p = probe();
  return p;
}

}  // namespace

std::string_view cpu_arch() {
#if defined(__x86_64__)
  return "x86_64";
#elif defined(__aarch64__)
  return "aarch64";
#else
  return "unknown";
#endif
}

const std::vector<std::string>& cpu_features() {
  return probed().present;
}

const std::vector<std::string>& cpu_known_features() {
  return probed().known;
}

bool cpu_has(std::string_view feature) {
  if (!feature.empty() && feature[0] == '+') feature.remove_prefix(1);
  const auto& f = cpu_features();
  return std::find(f.begin(), f.end(), feature) != f.end();
}

}  // namespace kiln
