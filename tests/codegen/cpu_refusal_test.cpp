// A kernel .so records the CPU features its target needs (kiln_module_target); the runtime
// refuses a CPU that lacks them with a clear message before any kernel code runs, instead
// of dying on SIGILL mid-kernel. Checked on emulated CPUs: qemu-aarch64 -cpu neoverse-n1 (no
// bf16) and qemu-x86_64 -cpu Haswell (no AVX-512), and a module of the wrong architecture.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "tests/codegen/codegen_test_util.h"
#include "compiler/ir/op.h"
#include "kiln/runtime.h"
#include "runtime/process/kernel_exec.h"

namespace kiln::codegen::testing {
namespace {

using ir::Buffer;
using ir::DataType;
using ir::LoweredFunc;
using ir::Var;

LoweredFunc copy_kernel() {
  Buffer a = ir::make_buffer("A", DataType::f32(), {16}), b = ir::make_buffer("B", DataType::f32(), {16});
  Var i("i");
  return {"copy", {a, b}, ir::make_for(i, 0, 16, ir::ForKind::Serial,
                                         ir::make_store(b, ir::make_load(a, {i}), {i}))};
}

// Runs `command` through the shell; returns its exit status and stdout+stderr.
std::pair<int, std::string> run_command(const std::string& command) {
  std::string out;
  std::FILE* p = popen((command + " 2>&1").c_str(), "r");
  if (!p) return {-1, "popen failed"};
  std::array<char, 512> buf;
  while (std::fgets(buf.data(), buf.size(), p)) out += buf.data();
  return {pclose(p), out};
}

std::string runner_args(const std::string& so) {
  std::string arg = temp_path("refusal_arg");
  std::ofstream(arg, std::ios::binary) << std::string(64, '\0');
  return " --lib " + so + " --fn copy --arg " + arg + " --arg " + arg;
}

TEST(CpuRefusal, ArmBf16ModuleOnACpuWithoutBf16) {
  std::vector<std::string> qemu = aarch64_qemu_prefix();
  if (qemu.empty() || std::string(KILN_AARCH64_RUNNER).empty() ||
      !std::filesystem::exists(KILN_AARCH64_RUNNER))
    GTEST_SKIP() << "no qemu-aarch64 or no AArch64 kernel runner";
  std::string so = build({copy_kernel()}, target_from_name("arm-bf16"));
  std::string sysroot = qemu.back();
  // The same module runs on a CPU that has bf16...
  auto [ok_rc, ok_out] = run_command("timeout 60 qemu-aarch64 -cpu max -L " + sysroot + " " +
                                     KILN_AARCH64_RUNNER + runner_args(so));
  EXPECT_EQ(ok_rc, 0) << ok_out;
  // ...and is refused, naming what is missing, on one that does not.
  auto [rc, out] = run_command("timeout 60 qemu-aarch64 -cpu neoverse-n1 -L " + sysroot + " " +
                               KILN_AARCH64_RUNNER + runner_args(so));
  EXPECT_NE(rc, 0);
  EXPECT_NE(out.find("(target arm-bf16) needs bf16, i8mm, this CPU lacks them"), std::string::npos)
      << out;
}

TEST(CpuRefusal, BoardProfilesOnTheirCoresAndOnOlderOnes) {
  // Profiles by name (compiler/target/profiles.h): a Graviton3 module runs on a Neoverse-V1
  // and is refused on a Raspberry Pi 4's Cortex-A72, naming what it lacks; a Raspberry Pi 5
  // module (dotprod, fp16) runs on its Cortex-A76.
  std::vector<std::string> qemu = aarch64_qemu_prefix();
  if (qemu.empty() || std::string(KILN_AARCH64_RUNNER).empty() ||
      !std::filesystem::exists(KILN_AARCH64_RUNNER))
    GTEST_SKIP() << "no qemu-aarch64 or no AArch64 kernel runner";
  const std::string sysroot = qemu.back();
  auto run_on = [&](const std::string& cpu, const std::string& so) {
    return run_command("timeout 60 qemu-aarch64 -cpu " + cpu + " -L " + sysroot + " " +
                       KILN_AARCH64_RUNNER + runner_args(so));
  };
  const std::string graviton3 = build({copy_kernel()}, target_from_name("graviton3"));
  auto [ok_rc, ok_out] = run_on("max", graviton3);
  EXPECT_EQ(ok_rc, 0) << ok_out;
  auto [rc, out] = run_on("cortex-a72", graviton3);
  EXPECT_NE(rc, 0);
  EXPECT_NE(out.find("(target neoverse-v1) needs"), std::string::npos) << out;
  for (const char* f : {"bf16", "dotprod", "i8mm"}) EXPECT_NE(out.find(f), std::string::npos) << out;
  EXPECT_EQ(out.find("sve"), std::string::npos) << "SVE is not required: " << out;
  auto [a76_rc, a76_out] = run_on("cortex-a76", build({copy_kernel()}, target_from_name("rpi5")));
  EXPECT_EQ(a76_rc, 0) << a76_out;
}

TEST(CpuRefusal, Avx512ModuleOnAnAvx2Cpu) {
  if (run_command("command -v qemu-x86_64").first != 0) GTEST_SKIP() << "no qemu-x86_64";
  std::string so = build({copy_kernel()}, target_from_name("x86-avx512"));
  auto [rc, out] = run_command("timeout 60 qemu-x86_64 -cpu Haswell " +
                               std::string(KILN_HOST_RUNNER) + runner_args(so));
  EXPECT_NE(rc, 0);
  EXPECT_NE(out.find("(target x86-avx512) needs avx512f"), std::string::npos) << out;
  EXPECT_NE(out.find("this CPU lacks them"), std::string::npos) << out;
  EXPECT_EQ(out.find("Illegal instruction"), std::string::npos) << out;
}

TEST(CpuRefusal, ModuleOfAnotherArchitecture) {
  std::string so = build({copy_kernel()}, target_from_name("arm-neon"));
  ThreadPool pool(1);
  try {
    KernelModule m(so, pool);
    FAIL() << "an AArch64 module loaded on this machine";
  } catch (const RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find("is built for aarch64, this machine is x86_64"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace kiln::codegen::testing
