// kiln-kernel-runner on the host, driven through run_kernel_out_of_process: results, thread
// count, and the failures (bad symbol, crash, hang, bad options) reported with the runner's
// own words.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "runtime/process/kernel_exec.h"

namespace kiln::testing {
namespace {

std::string failure_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no std::runtime_error thrown";
  return "";
}

TEST(KernelRunner, AddOne) {
  for (int threads : {1, 3}) {
    const int64_t n = 1027;
    std::vector<float> in(n);
    for (int64_t i = 0; i < n; ++i) in[i] = static_cast<float>(i) - 100.25f;
    const KernelRun run = run_kernel_out_of_process(
        KILN_HOST_RUNNER, false, KILN_FIXTURE_KERNEL, "add_one",
        {to_bytes(std::vector<int64_t>{n}), to_bytes(in), std::vector<uint8_t>(n * sizeof(float))},
        {2, 1}, /*repeat=*/3, threads);
    ASSERT_EQ(run.outputs.size(), 2u);
    const auto out = from_bytes<float>(run.outputs[0]);
    ASSERT_EQ(out.size(), static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(out[i], in[i] + 1) << i;
    EXPECT_EQ(from_bytes<float>(run.outputs[1]), in);  // inputs come back unchanged
    EXPECT_GE(run.median_ms, 0);
  }
}

TEST(KernelRunner, ThreadsReachThePool) {
  for (int threads : {1, 2, 5}) {
    const KernelRun run = run_kernel_out_of_process(
        KILN_HOST_RUNNER, false, KILN_FIXTURE_KERNEL, "count_chunks",
        {to_bytes(std::vector<int64_t>{100}), to_bytes(std::vector<int64_t>{0})}, {1}, 1, threads);
    EXPECT_EQ(from_bytes<int64_t>(run.outputs[0]), std::vector<int64_t>{threads});
  }
}

TEST(KernelRunner, MissingKernelIsReported) {
  const std::string msg = failure_of([] {
    run_kernel_out_of_process(KILN_HOST_RUNNER, false, KILN_FIXTURE_KERNEL, "no_such_kernel",
                              {std::vector<uint8_t>(8)}, {0});
  });
  EXPECT_NE(msg.find("no_such_kernel"), std::string::npos) << msg;
  EXPECT_NE(msg.find("exited with status 1"), std::string::npos) << msg;
}

TEST(KernelRunner, MissingLibraryIsReported) {
  const std::string msg = failure_of([] {
    run_kernel_out_of_process(KILN_HOST_RUNNER, false, "/nonexistent/libk.so", "add_one", {}, {});
  });
  EXPECT_NE(msg.find("cannot load kernel module '/nonexistent/libk.so'"), std::string::npos) << msg;
}

TEST(KernelRunner, KernelFailureIsReported) {
  const std::string msg = failure_of([] {
    run_kernel_out_of_process(
        KILN_HOST_RUNNER, false, KILN_FIXTURE_KERNEL, "fail_at",
        {to_bytes(std::vector<int64_t>{10}), to_bytes(std::vector<int64_t>{3})}, {}, 1, 2);
  });
  EXPECT_NE(msg.find("status 7"), std::string::npos) << msg;
}

TEST(KernelRunner, BadOptionIsReported) {
  const std::string msg = failure_of([] {
    run_kernel_out_of_process(KILN_HOST_RUNNER, false, KILN_FIXTURE_KERNEL, "add_one", {}, {},
                              /*repeat=*/0);
  });
  EXPECT_NE(msg.find("--repeat"), std::string::npos) << msg;
}

TEST(KernelRunner, CrashIsContained) {
  const std::string msg = failure_of([] {
    run_kernel_out_of_process(KILN_HOST_RUNNER, false, KILN_FIXTURE_KERNEL, "trap",
                              {std::vector<uint8_t>(8)}, {});
  });
  EXPECT_NE(msg.find("killed by signal"), std::string::npos) << msg;
}

TEST(KernelRunner, HangIsKilled) {
  const std::string msg = failure_of([] {
    run_kernel_out_of_process(KILN_HOST_RUNNER, false, KILN_FIXTURE_KERNEL, "spin",
                              {std::vector<uint8_t>(8)}, {}, 1, 1, /*timeout_s=*/0.5);
  });
  EXPECT_NE(msg.find("timed out"), std::string::npos) << msg;
}

TEST(KernelRunner, OutputIndexMustNameAnArgument) {
  EXPECT_THROW(run_kernel_out_of_process(KILN_HOST_RUNNER, false, KILN_FIXTURE_KERNEL, "add_one",
                                         {std::vector<uint8_t>(8)}, {1}),
               std::runtime_error);
}

TEST(KernelExecBytes, RoundTrip) {
  const std::vector<double> v = {1.5, -2, 3e10};
  EXPECT_EQ(from_bytes<double>(to_bytes(v)), v);
  EXPECT_THROW(from_bytes<int32_t>(std::vector<uint8_t>(5)), std::runtime_error);
}

}  // namespace
}  // namespace kiln::testing
