#include "compiler/target/target.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>

#include "compiler/base/error.h"
#include "compiler/target/profiles.h"
#include "kiln/cpu_features.h"

namespace kiln {
namespace {

constexpr const char* kX86Triple = "x86_64-unknown-linux-gnu";
constexpr const char* kAArch64Triple = "aarch64-unknown-linux-gnu";

std::string_view strip_sign(std::string_view f) {
  return !f.empty() && (f[0] == '+' || f[0] == '-') ? f.substr(1) : f;
}

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// "v8.2a", "v8.6a": architecture versions, which no CPU probe reports as a feature.
bool is_arch_version(std::string_view f) {
  return f.size() > 1 && f[0] == 'v' && isdigit(static_cast<unsigned char>(f[1]));
}

Target x86_avx2() {
  return {"x86-avx2", kX86Triple, "haswell", {"+avx2", "+fma", "+f16c"}, 256, 32, 256};
}

// Skylake-SP's AVX-512, and nothing the build machine adds: a preset names the same features
// on every build host, so one command gives one artifact anywhere. CPUs with bf16 or int8 dot
// products are named by their profile (cooperlake, znver4, sapphirerapids, ...) or by `host`.
Target x86_avx512() {
  return {"x86-avx512",
          kX86Triple,
          "skylake-avx512",
          {"+avx512f", "+avx512bw", "+avx512vl", "+avx512dq", "+fma", "+f16c"},
          512,
          32,
          1024};
}

// Sapphire Rapids and later: AVX-512 with bf16 and int8 (VNNI) dot products and the AMX
// tiles (bf16 tile GEMMs). A model can be compiled for such a CPU anywhere; running it needs one.
Target x86_amx() {
  Target t = x86_avx512();
  t.name = "x86-amx";
  t.cpu = "sapphirerapids";
  t.l1d_kib = 48, t.l2_kib = 2048;
  for (const char* f : {"+avx512bf16", "+avx512vnni", "+amx-tile", "+amx-bf16"})
    t.features.push_back(f);
  return t;
}

// A generic ARMv8 core: Cortex-A72's caches (L2 shared by its cluster of four).
Target arm(const char* name, std::vector<std::string> features) {
  return {name, kAArch64Triple, "generic", std::move(features), 128, 32, 1024};
}

// This machine's data caches per core, from Linux's sysfs (0 where it says nothing, as in
// some containers and under emulators).
struct CacheSizes {
  int l1d_kib = 0, l2_kib = 0;
};
CacheSizes cpu_cache_sizes() {
  CacheSizes c;
  for (int i = 0; i < 8; ++i) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/";
    std::ifstream level_file(dir + "level"), type_file(dir + "type"), size_file(dir + "size");
    int level = 0;
    std::string type, size;
    if (!(level_file >> level) || !(type_file >> type) || !(size_file >> size)) continue;
    int kib = std::atoi(size.c_str());  // "48K", "2048K", "1M"
    if (size.back() == 'M') kib *= 1024;
    if (level == 1 && type == "Data") c.l1d_kib = kib;
    if (level == 2 && type != "Instruction") c.l2_kib = kib;
  }
  return c;
}

}  // namespace

bool Target::has(std::string_view feature) const {
  std::string_view want = strip_sign(feature);
  for (const auto& f : features)
    if (f.size() == want.size() + 1 && f[0] == '+' && std::string_view(f).substr(1) == want)
      return true;
  return false;
}

bool Target::is_x86() const {
  return starts_with(triple, "x86_64");
}
bool Target::is_aarch64() const {
  return starts_with(triple, "aarch64");
}

int Target::lanes(ir::DataType t) const {
  return std::max(1, vector_bits / t.bits);
}

std::string Target::feature_string() const {
  std::string s;
  for (const auto& f : features) s += (s.empty() ? "" : ",") + f;
  return s;
}

std::vector<std::string> Target::required_cpu_features() const {
  std::vector<std::string> out;
  for (const auto& f : features)
    if (!f.empty() && f[0] == '+' && !is_arch_version(strip_sign(f)))
      out.emplace_back(strip_sign(f));
  return out;
}

std::vector<std::string> target_preset_names() {
  return {"x86-avx2", "x86-avx512", "arm-neon", "arm-fp16", "arm-bf16", "x86-amx", "host"};
}

Target host_target() {
  Target t;
  t.name = "host";
  std::string_view arch = cpu_arch();
  t.triple = arch == "x86_64" ? kX86Triple : arch == "aarch64" ? kAArch64Triple : "unknown";
  t.cpu = "host";
  // Both what the CPU has and what it lacks of the features the probe knows: a virtual
  // machine may hide features that the CPU model alone would imply.
  for (const std::string& f : cpu_known_features())
    t.features.push_back((cpu_has(f) ? "+" : "-") + f);
  std::sort(t.features.begin(), t.features.end());
  t.vector_bits = t.has("avx512f") ? 512 : t.has("avx2") ? 256 : 128;
  const CacheSizes caches = cpu_cache_sizes();
  if (caches.l1d_kib > 0) t.l1d_kib = caches.l1d_kib;
  if (caches.l2_kib > 0) t.l2_kib = caches.l2_kib;
  return t;
}

Target target_from_name(const std::string& name) {
  if (name == "x86-avx2") return x86_avx2();
  if (name == "x86-avx512") return x86_avx512();
  if (name == "x86-amx") return x86_amx();
  if (name == "arm-neon") return arm("arm-neon", {"+neon"});
  if (name == "arm-fp16") return arm("arm-fp16", {"+v8.2a", "+neon", "+fullfp16"});
  if (name == "arm-bf16")
    return arm("arm-bf16", {"+v8.6a", "+neon", "+fullfp16", "+bf16", "+i8mm", "+dotprod"});
  if (name == "host") return host_target();
  if (const CpuProfile* p = find_cpu_profile(name)) return p->target;
  std::string valid, named;
  for (const auto& n : target_preset_names()) valid += (valid.empty() ? "" : ", ") + n;
  for (const CpuProfile& p : cpu_profiles()) {
    named += (named.empty() ? "" : ", ") + p.name;
    for (const std::string& a : p.aliases) named += ", " + a;
  }
  user_error() << "unknown target '" << name << "'; valid targets: " << valid
               << "; CPUs and boards: " << named << " (kiln targets describes them)";
  return {};
}

bool host_can_run(const Target& t) {
  std::string_view arch = cpu_arch();
  if (!(t.is_x86() && arch == "x86_64") && !(t.is_aarch64() && arch == "aarch64")) return false;
  for (const std::string& f : t.required_cpu_features())
    if (!cpu_has(f)) return false;
  return true;
}

}  // namespace kiln
