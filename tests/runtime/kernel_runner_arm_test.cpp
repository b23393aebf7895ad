// The AArch64 path: the fixture module cross-compiled for AArch64, run by the cross-built
// kiln-kernel-runner under qemu-aarch64. Skipped (with the reason) when any piece is missing.
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "runtime/process/kernel_exec.h"

namespace kiln::testing {
namespace {

class Aarch64Runner : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::string(KILN_AARCH64_RUNNER).empty()) {
      GTEST_SKIP() << "no AArch64 runner was built (aarch64-linux-gnu-g++ missing)";
    }
    if (std::string(KILN_AARCH64_FIXTURE_KERNEL).empty()) {
      GTEST_SKIP() << "no AArch64 fixture was built (aarch64-linux-gnu-gcc missing)";
    }
    if (aarch64_qemu_prefix().empty()) GTEST_SKIP() << "qemu-aarch64 is not on PATH";
    ASSERT_EQ(access(KILN_AARCH64_RUNNER, X_OK), 0) << "missing " << KILN_AARCH64_RUNNER;
  }
};

TEST(Aarch64QemuPrefix, MatchesTheInstalledSysroot) {
  const auto prefix = aarch64_qemu_prefix();
  if (prefix.empty()) GTEST_SKIP() << "qemu-aarch64 is not on PATH";
  ASSERT_EQ(prefix.size(), 5u);
  EXPECT_EQ(prefix[0], "qemu-aarch64");
  EXPECT_EQ(prefix[1], "-cpu");
  EXPECT_EQ(prefix[2], "max");
  EXPECT_EQ(prefix[3], "-L");
  const bool multiarch = access("/lib/ld-linux-aarch64.so.1", F_OK) == 0;
  EXPECT_EQ(prefix[4], multiarch ? "/" : "/usr/aarch64-linux-gnu");
}

TEST_F(Aarch64Runner, AddOne) {
  for (int threads : {1, 2}) {
    const int64_t n = 1001;
    std::vector<float> in(n);
    for (int64_t i = 0; i < n; ++i) in[i] = static_cast<float>(i) * 0.25f;
    const KernelRun run = run_kernel_out_of_process(
        KILN_AARCH64_RUNNER, true, KILN_AARCH64_FIXTURE_KERNEL, "add_one",
        {to_bytes(std::vector<int64_t>{n}), to_bytes(in), std::vector<uint8_t>(n * sizeof(float))},
        {2}, 2, threads);
    const auto out = from_bytes<float>(run.outputs.at(0));
    ASSERT_EQ(out.size(), static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(out[i], in[i] + 1) << i;
  }
}

TEST_F(Aarch64Runner, PoolWorksUnderQemu) {
  const KernelRun run = run_kernel_out_of_process(
      KILN_AARCH64_RUNNER, true, KILN_AARCH64_FIXTURE_KERNEL, "count_chunks",
      {to_bytes(std::vector<int64_t>{64}), to_bytes(std::vector<int64_t>{0})}, {1}, 1, 4);
  EXPECT_EQ(from_bytes<int64_t>(run.outputs.at(0)), std::vector<int64_t>{4});
}

TEST_F(Aarch64Runner, HostModuleIsRefused) {
  // An x86-64 .so is not loadable by the AArch64 runner: the error must say which file.
  try {
    run_kernel_out_of_process(KILN_AARCH64_RUNNER, true, KILN_FIXTURE_KERNEL, "add_one", {}, {});
    FAIL() << "loading a host module under qemu succeeded";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(KILN_FIXTURE_KERNEL), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kiln::testing
