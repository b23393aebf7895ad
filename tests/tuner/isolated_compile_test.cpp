// tuner/isolated_compile.h: code generation in a child process with a hard deadline. A real
// compile of a real kernel, once to completion and once with a deadline far shorter than
// it takes: the second must come back as a timeout long before the compile would have
// finished, with the child killed and reaped.
#include "tuner/isolated_compile.h"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>

#include "runtime/process/temp_dir.h"
#include "schedules/dense/dense.h"
#include "tuner/builder.h"

namespace kiln::tuner {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// A dense kernel whose LLVM compile takes a while: a wide register tile, K unrolled 8 times.
BuiltKernel slow_to_compile_kernel(const Target& t) {
  const schedules::OpTemplate& tpl = schedules::dense_packed_template();
  schedules::Workload w{"dense", {{"M", 96}, {"N", 256}, {"K", 256}}, ir::DataType::f32(), {}};
  schedules::Config cfg = tpl.fallback(w, t);
  cfg.set("mr", 12);
  cfg.set("nr_vecs", 4);
  cfg.set("k_unroll", 8);
  return lower_template(tpl, w, t, cfg, "slow_dense");
}

bool no_child_left() {
  return ::waitpid(-1, nullptr, WNOHANG) == -1 && errno == ECHILD;
}

TEST(IsolatedCompile, CompilesAndLinksInAChild) {
  const Target t = target_from_name("x86-avx2");
  BuiltKernel k = slow_to_compile_kernel(t);
  TempDir dir("kiln-isolated-test");
  const std::string so = dir.file("k.so");
  IsolatedCompile r = compile_isolated(k.func, t, so, 300);
  ASSERT_EQ(r.error, MeasureErrorKind::Ok) << r.message;
  std::ifstream in(so, std::ios::binary);
  char magic[4] = {};
  in.read(magic, 4);
  EXPECT_EQ(std::string(magic, 4), "\x7f" "ELF");
  EXPECT_TRUE(no_child_left());
}

TEST(IsolatedCompile, ACompilePastItsDeadlineIsKilled) {
  const Target t = target_from_name("x86-avx2");
  BuiltKernel k = slow_to_compile_kernel(t);
  TempDir dir("kiln-isolated-test");
  auto t0 = Clock::now();
  ASSERT_EQ(compile_isolated(k.func, t, dir.file("full.so"), 300).error, MeasureErrorKind::Ok);
  const double full_s = seconds_since(t0);

  t0 = Clock::now();
  IsolatedCompile r = compile_isolated(k.func, t, dir.file("cut.so"), full_s / 20);
  const double cut_s = seconds_since(t0);
  EXPECT_EQ(r.error, MeasureErrorKind::CompileTimeout);
  EXPECT_NE(r.message.find("killed"), std::string::npos) << r.message;
  // Killed at the deadline, not left to finish: a soft limit would take the full time.
  EXPECT_LT(cut_s, full_s / 2) << "full compile " << full_s << " s";
  EXPECT_FALSE(std::filesystem::exists(dir.file("cut.so")));
  EXPECT_TRUE(no_child_left());
}

}  // namespace
}  // namespace kiln::tuner
