// Targets as data: presets, feature queries, host detection.
#include "compiler/target/target.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "compiler/base/error.h"
#include "compiler/target/profiles.h"
#include "kiln/cpu_features.h"
#include "runtime/process/machine.h"

namespace kiln {
namespace {

TEST(Target, Presets) {
  Target avx2 = target_from_name("x86-avx2");
  EXPECT_EQ(avx2.triple, "x86_64-unknown-linux-gnu");
  EXPECT_EQ(avx2.cpu, "haswell");
  EXPECT_TRUE(avx2.has("avx2") && avx2.has("+fma") && avx2.has("f16c"));
  EXPECT_FALSE(avx2.has("avx512f"));
  EXPECT_EQ(avx2.vector_bits, 256);
  EXPECT_EQ(avx2.lanes(ir::DataType::f32()), 8);
  EXPECT_TRUE(avx2.is_x86() && !avx2.is_aarch64());

  Target avx512 = target_from_name("x86-avx512");
  EXPECT_EQ(avx512.cpu, "skylake-avx512");
  EXPECT_TRUE(avx512.has("avx512bw") && avx512.has("avx512vl") && avx512.has("avx512dq"));
  EXPECT_EQ(avx512.lanes(ir::DataType::f32()), 16);
  EXPECT_EQ(avx512.lanes(ir::DataType::bf16()), 32);
  // A preset is the same on every build machine (issue 36): an AVX512-BF16 or VNNI build host
  // adds nothing to it, so one command gives one artifact anywhere.
  EXPECT_EQ(avx512.feature_string(), "+avx512f,+avx512bw,+avx512vl,+avx512dq,+fma,+f16c");
  EXPECT_EQ(target_from_name("x86-amx").feature_string(),
            avx512.feature_string() + ",+avx512bf16,+avx512vnni,+amx-tile,+amx-bf16");

  Target neon = target_from_name("arm-neon");
  EXPECT_EQ(neon.triple, "aarch64-unknown-linux-gnu");
  EXPECT_TRUE(neon.is_aarch64() && neon.has("neon") && !neon.has("fullfp16"));
  EXPECT_EQ(neon.lanes(ir::DataType::f32()), 4);
  EXPECT_TRUE(target_from_name("arm-fp16").has("fullfp16"));
  Target bf16 = target_from_name("arm-bf16");
  EXPECT_TRUE(bf16.has("bf16") && bf16.has("i8mm") && bf16.has("dotprod") && bf16.has("fullfp16"));
  EXPECT_EQ(bf16.feature_string(), "+v8.6a,+neon,+fullfp16,+bf16,+i8mm,+dotprod");
}

TEST(Target, AmxPresetNamesTheTileFeatures) {
  // Whatever the build machine has: a model can be compiled here for a Sapphire Rapids CPU.
  Target amx = target_from_name("x86-amx");
  EXPECT_TRUE(amx.is_x86());
  EXPECT_EQ(amx.vector_bits, 512);
  for (const char* f : {"amx-tile", "amx-bf16", "avx512bf16", "avx512f", "avx512vl"})
    EXPECT_TRUE(amx.has(f)) << f;
  EXPECT_FALSE(target_from_name("x86-avx512").has("amx-tile"));
}

TEST(Target, ProfilesByNameAndAlias) {
  // Each profile resolves by its name and by each alias, to a target named after it (so
  // tuning records made with "rpi4" and "cortex-a72" are one target's).
  for (const CpuProfile& p : cpu_profiles()) {
    EXPECT_EQ(target_from_name(p.name).name, p.name);
    EXPECT_EQ(target_from_name(p.name).feature_string(), p.target.feature_string());
    for (const std::string& a : p.aliases) EXPECT_EQ(target_from_name(a).name, p.name) << a;
    EXPECT_FALSE(p.describes.empty()) << p.name;
    EXPECT_GT(p.target.l1d_kib, 0) << p.name;
    EXPECT_GT(p.target.l2_kib, p.target.l1d_kib) << p.name;
  }
  // What the boards are: a Pi 4 has NEON only, a Pi 5 adds dotprod and fp16, a
  // Graviton3 bf16 and i8mm with SVE disabled, a Sapphire Rapids the AMX tiles.
  const Target rpi4 = target_from_name("rpi4");
  EXPECT_TRUE(rpi4.is_aarch64() && rpi4.has("neon") && rpi4.cpu == "cortex-a72");
  EXPECT_FALSE(rpi4.has("dotprod") || rpi4.has("fullfp16"));
  const Target rpi5 = target_from_name("rpi5");
  EXPECT_TRUE(rpi5.has("dotprod") && rpi5.has("fullfp16") && !rpi5.has("bf16"));
  const Target g3 = target_from_name("graviton3");
  EXPECT_TRUE(g3.has("bf16") && g3.has("i8mm") && !g3.has("sve"));
  const std::vector<std::string> need = g3.required_cpu_features();
  EXPECT_EQ(std::count(need.begin(), need.end(), "sve"), 0);
  EXPECT_EQ(std::count(need.begin(), need.end(), "v8.4a"), 0);
  EXPECT_EQ(target_from_name("rk3399").cpu, "cortex-a72");  // the big cores
  EXPECT_FALSE(target_from_name("znver3").has("avx512f"));
  for (const char* f : {"avx512bf16", "avx512vnni"}) EXPECT_TRUE(target_from_name("znver4").has(f));
  for (const char* f : {"amx-tile", "amx-bf16", "avx512fp16"})
    EXPECT_TRUE(target_from_name("sapphirerapids").has(f)) << f;
  EXPECT_FALSE(target_from_name("cascadelake").has("avx512bf16"));
}

TEST(Target, AllPresetsResolve) {
  for (const std::string& n : target_preset_names()) EXPECT_EQ(target_from_name(n).name, n);
}

TEST(Target, UnknownNameIsAUserError) {
  try {
    target_from_name("riscv");
    FAIL();
  } catch (const UserError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("'riscv'"), std::string::npos) << m;
    for (const std::string& n : target_preset_names()) EXPECT_NE(m.find(n), std::string::npos) << m;
    for (const char* n : {"znver4", "rpi4", "graviton3"}) EXPECT_NE(m.find(n), std::string::npos) << m;
  }
}

TEST(Target, HostRunsItself) {
  Target host = target_from_name("host");
  EXPECT_TRUE(host_can_run(host));
  EXPECT_EQ(host.cpu, "host");  // codegen resolves it to this CPU (codegen_test checks)
  EXPECT_TRUE(host.is_x86() || host.is_aarch64());
  if (host.is_x86()) {
    EXPECT_FALSE(host_can_run(target_from_name("arm-neon")));
    EXPECT_EQ(host.vector_bits, host.has("avx512f") ? 512 : host.has("avx2") ? 256 : 128);
  }
}

// Caches: a preset names a typical core of its kind, a profile its own; host reads this
// machine's (sysfs), or keeps the default where the machine does not say.
TEST(Target, CachesComeWithEveryTarget) {
  EXPECT_EQ(target_from_name("x86-avx2").l2_kib, 256);
  EXPECT_EQ(target_from_name("x86-avx512").l1d_kib, 32);
  EXPECT_EQ(target_from_name("cortex-a76").l1d_kib, 64);
  EXPECT_EQ(target_from_name("apple-m1").l1d_kib, 128);
  const Target host = host_target();
  EXPECT_GE(host.l1d_kib, 16);
  EXPECT_GT(host.l2_kib, host.l1d_kib);
}

TEST(Target, HostListsWhatTheProbeKnows) {
  Target host = host_target();
  for (const std::string& f : cpu_known_features()) {
    EXPECT_EQ(host.has(f), cpu_has(f)) << f;
    EXPECT_TRUE(host.has(f) || std::count(host.features.begin(), host.features.end(), "-" + f))
        << f << " is neither enabled nor disabled";
  }
}

TEST(Target, RequiredCpuFeaturesLeaveOutArchitectureVersions) {
  std::vector<std::string> want = {"neon", "fullfp16", "bf16", "i8mm", "dotprod"};
  EXPECT_EQ(target_from_name("arm-bf16").required_cpu_features(), want);
  EXPECT_EQ(target_from_name("x86-avx2").required_cpu_features(),
            (std::vector<std::string>{"avx2", "fma", "f16c"}));
}


// `kiln-worker --print-board` names a board's --target by its core (runtime/process/
// machine.h, which cannot include the profiles): each core it names has a profile of that
// name, whose code needs exactly the features it checks; a core without one, or missing a
// feature of its profile, gets the widest preset its features run.
TEST(BoardTarget, EachCoresTargetIsItsProfile) {
  const std::pair<const char*, const char*> cores[] = {{"Cortex-A53", "cortex-a53"},
                                                       {"Cortex-A72", "cortex-a72"},
                                                       {"Cortex-A76", "cortex-a76"},
                                                       {"Neoverse-N1", "neoverse-n1"},
                                                       {"Neoverse-V1", "neoverse-v1"}};
  for (const auto& [core, name] : cores) {
    const CpuProfile* p = find_cpu_profile(name);
    ASSERT_NE(p, nullptr) << name;
    MachineIdentity board{"ARM", core, p->target.required_cpu_features(), 4};
    EXPECT_EQ(suggested_target(board, "aarch64").target, name) << core;
    // Without its last feature (a kernel that hides one): not the profile.
    board.features.pop_back();
    if (!board.features.empty())
      EXPECT_NE(suggested_target(board, "aarch64").target, name) << core;
  }
  MachineIdentity a57{"ARM", "Cortex-A57", {"neon"}, 4};
  EXPECT_EQ(suggested_target(a57, "aarch64").target, "arm-neon");
  MachineIdentity unknown{"unknown", "unknown aarch64 CPU",
                          {"neon", "fullfp16", "dotprod", "sve", "i8mm", "bf16"}, 4};
  EXPECT_EQ(suggested_target(unknown, "aarch64").target, "arm-bf16");
  EXPECT_EQ(suggested_target(unknown, "x86_64").target, "host");
  for (const std::string preset : {"arm-neon", "arm-fp16", "arm-bf16"})
    EXPECT_NO_THROW(target_from_name(preset));
}

}  // namespace
}  // namespace kiln
