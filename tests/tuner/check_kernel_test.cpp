// tuner/check_kernel.h's timing summary: run_lowered reports the median and the fastest of its
// repeats (the bf16 benchmark table reads the fastest: on a loaded machine it is the least
// disturbed run).
#include "tuner/check_kernel.h"

#include <gtest/gtest.h>

#include "schedules/dense/dense.h"

namespace kiln::tuner {
namespace {

TEST(RunLowered, ReportsTheFastestRunBesideTheMedian) {
  const Target t = target_from_name("x86-avx2");
  const schedules::OpTemplate& tpl = schedules::dense_packed_template();
  schedules::Workload w{"dense", {{"M", 16}, {"N", 64}, {"K", 32}}, ir::DataType::f32(), {}};
  BuiltKernel k = lower_template(tpl, w, t, tpl.fallback(w, t), "runner_test");
  std::vector<Bytes> args;
  for (const auto& a : k.args)
    args.push_back(encode(random_values(a.kernel_elements, 1, w.dtype), w.dtype));
  RunOptions o;
  o.repeat = 9;
  KernelRunResult r = run_lowered(k.func, t, args, {}, o);
  if (!r.skip_reason.empty()) GTEST_SKIP() << r.skip_reason;
  EXPECT_GT(r.best_ms, 0);
  EXPECT_LE(r.best_ms, r.median_ms);

  o.repeat = 1;  // one run: it is both
  r = run_lowered(k.func, t, args, {}, o);
  EXPECT_EQ(r.best_ms, r.median_ms);
}

}  // namespace
}  // namespace kiln::tuner
