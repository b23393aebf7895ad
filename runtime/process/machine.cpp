#include "runtime/process/machine.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string_view>

#include "kiln/cpu_features.h"

#if defined(__x86_64__)
#include <cpuid.h>
#elif defined(__aarch64__)
#include <sys/auxv.h>
#endif

#ifndef KILN_VERSION
#define KILN_VERSION "unknown"
#endif

namespace kiln {
namespace {

std::string trimmed(std::string s) {
  const size_t begin = s.find_first_not_of(" \t");
  const size_t end = s.find_last_not_of(" \t\r\n");
  return begin == std::string::npos ? "" : s.substr(begin, end - begin + 1);
}

#if defined(__x86_64__)
void cpu_vendor_and_model(MachineIdentity& m) {
  unsigned a = 0, b = 0, c = 0, d = 0;
  __cpuid(0, a, b, c, d);
  char vendor[13] = {};
  std::memcpy(vendor, &b, 4);
  std::memcpy(vendor + 4, &d, 4);
  std::memcpy(vendor + 8, &c, 4);
  m.vendor = vendor;
  // The brand string: 48 bytes over leaves 0x80000002-4, padded with spaces (and NULs).
  __cpuid(0x80000000, a, b, c, d);
  if (a < 0x80000004) return;
  char brand[49] = {};
  for (unsigned leaf = 0; leaf < 3; ++leaf) {
    unsigned r[4];
    __cpuid(0x80000002 + leaf, r[0], r[1], r[2], r[3]);
    std::memcpy(brand + 16 * leaf, r, 16);
  }
  m.model = trimmed(brand);
  // A hypervisor may shorten the brand ("AMD EPYC" for Zen 2 to Zen 5 alike): the family and
  // model numbers tell the microarchitectures apart.
  __cpuid(1, a, b, c, d);
  unsigned family = (a >> 8) & 0xf, model = (a >> 4) & 0xf;
  if (family == 0xf) family += (a >> 20) & 0xff;
  if (family == 0x6 || family >= 0xf) model += ((a >> 16) & 0xf) << 4;
  m.model += (m.model.empty() ? "" : " ") + std::string("(family ") + std::to_string(family) +
             ", model " + std::to_string(model) + ")";
}
#else
// "CPU implementer : 0x41" and "CPU part : 0xd08" of the first processor in /proc/cpuinfo.
void cpu_vendor_and_model(MachineIdentity& m) {
  std::ifstream in("/proc/cpuinfo");
  unsigned implementer = 0, part = 0;
  bool have_implementer = false, have_part = false;
  for (std::string line; std::getline(in, line) && !(have_implementer && have_part);) {
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string key = trimmed(line.substr(0, colon));
    const unsigned long value = std::strtoul(line.c_str() + colon + 1, nullptr, 0);
    if (key == "CPU implementer") implementer = value, have_implementer = true;
    if (key == "CPU part") part = value, have_part = true;
  }
  // No ID lines (an emulator shows its host's /proc/cpuinfo): the main ID register itself,
  // which Linux (and qemu's user mode) lets a program read when HWCAP_CPUID says so.
  if (!(have_implementer && have_part) && (getauxval(AT_HWCAP) & (1ul << 11))) {
    unsigned long midr = 0;
    asm volatile("mrs %0, midr_el1" : "=r"(midr));
    implementer = (midr >> 24) & 0xff;
    part = (midr >> 4) & 0xfff;
    have_implementer = have_part = implementer != 0;
  }
  if (have_implementer && have_part) {
    MachineIdentity core = aarch64_core(implementer, part);
    m.vendor = core.vendor;
    m.model = core.model;
  }
}
#endif

}  // namespace

const char* kiln_version() {
  return KILN_VERSION;
}

MachineIdentity aarch64_core(unsigned implementer, unsigned part) {
  struct Core {
    unsigned implementer, part;
    const char* model;
  };
  // The cores of common boards and servers (Arm's and its licensees' published part numbers).
  static constexpr Core kCores[] = {
      {0x41, 0xd03, "Cortex-A53"},   {0x41, 0xd04, "Cortex-A35"},  {0x41, 0xd05, "Cortex-A55"},
      {0x41, 0xd07, "Cortex-A57"},   {0x41, 0xd08, "Cortex-A72"},  {0x41, 0xd09, "Cortex-A73"},
      {0x41, 0xd0a, "Cortex-A75"},   {0x41, 0xd0b, "Cortex-A76"},  {0x41, 0xd0c, "Neoverse-N1"},
      {0x41, 0xd0d, "Cortex-A77"},   {0x41, 0xd40, "Neoverse-V1"}, {0x41, 0xd41, "Cortex-A78"},
      {0x41, 0xd44, "Cortex-X1"},    {0x41, 0xd46, "Cortex-A510"}, {0x41, 0xd47, "Cortex-A710"},
      {0x41, 0xd48, "Cortex-X2"},    {0x41, 0xd49, "Neoverse-N2"}, {0x41, 0xd4f, "Neoverse-V2"},
      {0x41, 0xd80, "Cortex-A520"},  {0x41, 0xd81, "Cortex-A720"}, {0x41, 0xd82, "Cortex-X4"},
      {0x48, 0xd01, "TaiShan v110"}, {0xc0, 0xac3, "Ampere-1"}};
  static constexpr std::pair<unsigned, const char*> kVendors[] = {
      {0x41, "ARM"},      {0x42, "Broadcom"},  {0x43, "Cavium"},
      {0x46, "Fujitsu"},  {0x48, "HiSilicon"}, {0x4e, "NVIDIA"},
      {0x51, "Qualcomm"}, {0x61, "Apple"},     {0xc0, "Ampere"}};
  MachineIdentity m;
  char hex[32];
  std::snprintf(hex, sizeof hex, "implementer 0x%02x", implementer);
  m.vendor = hex;
  for (const auto& [id, name] : kVendors)
    if (id == implementer) m.vendor = name;
  std::snprintf(hex, sizeof hex, "part 0x%03x", part);
  m.model = hex;
  for (const Core& c : kCores)
    if (c.implementer == implementer && c.part == part) m.model = c.model;
  return m;
}

BoardTarget suggested_target(const MachineIdentity& m, std::string_view arch) {
  auto has = [&](const char* f) {
    return std::find(m.features.begin(), m.features.end(), f) != m.features.end();
  };
  auto has_all = [&](std::initializer_list<const char*> fs) {
    return std::all_of(fs.begin(), fs.end(), has);
  };
  if (arch != "aarch64")
    return {"host",
            "kiln's named profiles (kiln targets) fix the features of a CPU; 'host' "
            "reads this one"};
  // The cores kiln has a profile of (compiler/target/profiles.cpp; a test keeps the two
  // alike), with the features their profile's code needs.
  struct Profile {
    const char* core;
    const char* target;
    std::initializer_list<const char*> needs;
  };
  static const Profile kProfiles[] = {
      {"Cortex-A53", "cortex-a53", {"neon"}},
      {"Cortex-A72", "cortex-a72", {"neon"}},
      {"Cortex-A76", "cortex-a76", {"neon", "fullfp16", "dotprod"}},
      {"Neoverse-N1", "neoverse-n1", {"neon", "fullfp16", "dotprod"}},
      {"Neoverse-V1", "neoverse-v1", {"neon", "fullfp16", "dotprod", "bf16", "i8mm"}},
  };
  for (const Profile& p : kProfiles)
    if (m.model == p.core && has_all(p.needs)) return {p.target, "the profile of this core"};
  // A core kiln has no profile of: the widest preset its features run.
  const std::string why = "a preset by its features (no profile of " + m.model + ")";
  if (has_all({"neon", "fullfp16", "bf16", "i8mm", "dotprod"})) return {"arm-bf16", why};
  if (has_all({"neon", "fullfp16"})) return {"arm-fp16", why};
  return {"arm-neon", why};
}

const MachineIdentity& this_machine() {
  static const MachineIdentity machine = [] {
    MachineIdentity m;
    cpu_vendor_and_model(m);
    if (m.vendor.empty()) m.vendor = "unknown";
    // An emulator or a kernel that hides the ID registers: the architecture, at least.
    if (m.model.empty()) m.model = "unknown " + std::string(cpu_arch()) + " CPU";
    m.features = cpu_features();
    const long online = sysconf(_SC_NPROCESSORS_ONLN);
    m.cores = online > 0 ? static_cast<unsigned>(online) : 0;
    return m;
  }();
  return machine;
}

}  // namespace kiln
