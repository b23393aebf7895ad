#include "compiler/target/profiles.h"

#include <algorithm>
#include <map>

namespace kiln {
namespace {

constexpr const char* kX86 = "x86_64-unknown-linux-gnu";
constexpr const char* kAArch64 = "aarch64-unknown-linux-gnu";

// The AVX-512 foundation every AVX-512 profile has (Skylake-SP's set).
std::vector<std::string> avx512(std::vector<std::string> more) {
  std::vector<std::string> f = {"+avx512f",  "+avx512bw", "+avx512vl", "+avx512dq",
                                "+avx512cd", "+avx2",     "+fma",      "+f16c"};
  f.insert(f.end(), more.begin(), more.end());
  return f;
}

CpuProfile x86(std::string name, std::string describes, std::vector<std::string> features,
               int vector_bits, int l1d, int l2, std::vector<std::string> aliases = {}) {
  CpuProfile p;
  p.name = name;
  p.aliases = std::move(aliases);
  p.describes = std::move(describes);
  p.target = {name, kX86, name, std::move(features), vector_bits, l1d, l2};
  return p;
}

CpuProfile arm(std::string name, std::string cpu, std::string describes,
               std::vector<std::string> features, int l1d, int l2,
               std::vector<std::string> aliases = {}, std::string note = "") {
  CpuProfile p;
  p.name = name;
  p.aliases = std::move(aliases);
  p.describes = std::move(describes);
  p.target = {name, kAArch64, std::move(cpu), std::move(features), 128, l1d, l2};
  p.note = std::move(note);
  return p;
}

// The clock a board or instance usually runs its cores at, in GHz: the boards' own (Raspberry
// Pi 3 1.2, Pi 4 1.5, Pi 5 2.4, RK3399's big cores 1.8), the cloud instances' all-core clocks,
// and a typical sustained clock for desktop and server CPUs.
const std::map<std::string, double> kClocks = {
    {"haswell", 3.0},        {"alderlake", 3.0},      {"znver3", 3.0},         {"znver4", 3.0},     {"znver5", 3.0},
    {"skylake-avx512", 2.5}, {"cascadelake", 2.5},    {"cooperlake", 2.5}, {"icelake-server", 2.9},
    {"sapphirerapids", 2.9}, {"cortex-a53", 1.2},     {"cortex-a72", 1.5}, {"rk3399", 1.8},
    {"cortex-a76", 2.4},     {"neoverse-n1", 2.5},    {"neoverse-v1", 2.6}, {"apple-m1", 3.2},
};

std::vector<CpuProfile> listed_profiles() {
  const std::vector<std::string> avx2 = {"+avx2", "+fma", "+f16c"};
  return {
      x86("haswell", "Intel Haswell to Comet Lake, and other AVX2 CPUs without AVX-512", avx2, 256,
          32, 256),
      x86("alderlake",
          "Intel Alder Lake to Raptor Lake: Core 12th-14th generation (AVX2, AVX-VNNI; no AVX-512)",
          {"+avx2", "+fma", "+f16c", "+avxvnni"}, 256, 48, 1280),
      x86("znver3", "AMD Zen 3: EPYC Milan, Ryzen 5000 (AVX2)", avx2, 256, 32, 512),
      x86("znver4", "AMD Zen 4: EPYC Genoa, Ryzen 7000 (AVX-512 on 256-bit units, BF16, VNNI)",
          avx512({"+avx512vnni", "+avx512bf16"}), 512, 32, 1024),
      x86("znver5", "AMD Zen 5: EPYC Turin, Ryzen 9000 (512-bit AVX-512, BF16, VNNI)",
          avx512({"+avx512vnni", "+avx512bf16"}), 512, 48, 1024),
      x86("skylake-avx512", "Intel Skylake-SP: Xeon Scalable 1st generation (AVX-512)", avx512({}),
          512, 32, 1024, {"aws-c5"}),
      x86("cascadelake", "Intel Cascade Lake: Xeon Scalable 2nd generation (AVX-512, VNNI)",
          avx512({"+avx512vnni"}), 512, 32, 1024),
      x86("cooperlake", "Intel Cooper Lake: Xeon Scalable 3rd generation, 4-8 sockets (BF16)",
          avx512({"+avx512vnni", "+avx512bf16"}), 512, 32, 1024),
      x86("icelake-server", "Intel Ice Lake-SP: Xeon Scalable 3rd generation (AVX-512, VNNI)",
          avx512({"+avx512vnni"}), 512, 48, 1280, {"aws-c6i"}),
      x86("sapphirerapids",
          "Intel Sapphire Rapids: Xeon Scalable 4th generation (BF16, FP16, AMX tiles)",
          avx512(
              {"+avx512vnni", "+avx512bf16", "+avx512fp16", "+amx-tile", "+amx-bf16", "+amx-int8"}),
          512, 48, 2048, {"aws-c7i"}),
      arm("cortex-a53", "cortex-a53", "Arm Cortex-A53: Raspberry Pi 3, RK3399's little cores",
          {"+neon"}, 32, 512, {"rpi3"}),
      arm("cortex-a72", "cortex-a72", "Arm Cortex-A72: Raspberry Pi 4 (BCM2711, 4 cores)",
          {"+neon"}, 32, 1024, {"rpi4"}),
      arm("rk3399", "cortex-a72", "Rockchip RK3399: 2 x Cortex-A72 (big) + 4 x Cortex-A53",
          {"+neon"}, 32, 1024, {},
          "code for the big cores; the runtime runs there by itself (2 threads held to the "
          "cores of the largest cpu_capacity): a thread on a little core would make every "
          "parallel region wait for it"),
      arm("cortex-a76", "cortex-a76", "Arm Cortex-A76: Raspberry Pi 5 (BCM2712, 4 cores)",
          {"+v8.2a", "+neon", "+fullfp16", "+dotprod"}, 64, 512, {"rpi5"}),
      arm("neoverse-n1", "neoverse-n1", "Arm Neoverse-N1: AWS Graviton2, Ampere Altra",
          {"+v8.2a", "+neon", "+fullfp16", "+dotprod"}, 64, 1024, {"graviton2"}),
      arm("neoverse-v1", "neoverse-v1", "Arm Neoverse-V1: AWS Graviton3 (BF16, I8MM; SVE not used)",
          {"+v8.4a", "+neon", "+fullfp16", "+dotprod", "+bf16", "+i8mm", "-sve"}, 64, 1024,
          {"graviton3"}),
      arm("apple-m1", "apple-m1", "Apple M1 under Linux (Asahi): Firestorm cores",
          {"+v8.4a", "+neon", "+fullfp16", "+dotprod"}, 128, 12288),
  };
}

std::vector<CpuProfile> make_profiles() {
  std::vector<CpuProfile> profiles = listed_profiles();
  for (CpuProfile& p : profiles) {
    p.ghz = kClocks.at(p.name);
    if (p.target.cpu == "cortex-a76") p.model_cpu = "neoverse-n1";
  }
  return profiles;
}

}  // namespace

const std::vector<CpuProfile>& cpu_profiles() {
  static const std::vector<CpuProfile> profiles = make_profiles();
  return profiles;
}

const CpuProfile* find_cpu_profile(std::string_view name) {
  for (const CpuProfile& p : cpu_profiles())
    if (p.name == name || std::count(p.aliases.begin(), p.aliases.end(), name)) return &p;
  return nullptr;
}

}  // namespace kiln
