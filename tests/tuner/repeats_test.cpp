// tuner/measure/repeats.h: the repeat rule, which candidates count as multi-thread (a
// parallel loop in the lowered kernel), and the measurement job carrying the result.
#include "tuner/measure/repeats.h"

#include <gtest/gtest.h>

#include "schedules/dense/dense.h"
#include "tuner/builder.h"
#include "tuner/measure/job.h"

namespace kiln::tuner {
namespace {

TEST(Repeats, GrowWithTheThreadsACandidateRunsOn) {
  EXPECT_EQ(repeats_for_threads(3, 1), 3u);
  EXPECT_EQ(repeats_for_threads(3, 2), 9u);   // x3
  EXPECT_EQ(repeats_for_threads(3, 3), 15u);  // x5
  EXPECT_EQ(repeats_for_threads(3, 4), 15u);
  EXPECT_EQ(repeats_for_threads(3, 8), 21u);  // x7
  EXPECT_EQ(repeats_for_threads(2, 16), 18u);  // x9
  EXPECT_EQ(repeats_for_threads(900, 64), kMaxRepeats);
  EXPECT_EQ(repeats_for_threads(0, 1), 1u);  // at least one timing
}

// The dense kernel with its parallel knob set to `parallel`.
BuiltKernel dense_kernel(int64_t parallel) {
  const Target t = target_from_name("x86-avx2");
  const schedules::OpTemplate& tpl = schedules::dense_packed_template();
  schedules::Workload w{"dense", {{"M", 64}, {"N", 128}, {"K", 8}}, ir::DataType::f32(), {}};
  schedules::Config cfg = tpl.fallback(w, t);
  cfg.set("parallel", parallel);
  return lower_template(tpl, w, t, cfg, "dense_k");
}

TEST(Repeats, OnlyAKernelWithAParallelLoopUsesThePool) {
  const BuiltKernel serial = dense_kernel(0), parallel = dense_kernel(1);
  EXPECT_EQ(candidate_threads(serial.func, 2), 1u);
  EXPECT_EQ(candidate_threads(parallel.func, 2), 2u);
  EXPECT_EQ(candidate_threads(parallel.func, 1), 1u);
}

TEST(Repeats, TheMeasureInputCarriesThemPerCandidate) {
  const schedules::OpTemplate& tpl = schedules::dense_packed_template();
  TaskData data(tpl, {"dense", {{"M", 64}, {"N", 128}, {"K", 8}}, ir::DataType::f32(), {}});
  MeasureOptions o;
  o.repeat = 4;
  o.threads = 2;
  const std::vector<uint8_t> so = {0};  // the job is only built here, never run
  EXPECT_EQ(make_input(dense_kernel(0), so, data, o).options.repeat, 4u);
  EXPECT_EQ(make_input(dense_kernel(1), so, data, o).options.repeat, 12u);
  o.threads = 1;
  EXPECT_EQ(make_input(dense_kernel(1), so, data, o).options.repeat, 4u);
}

}  // namespace
}  // namespace kiln::tuner
