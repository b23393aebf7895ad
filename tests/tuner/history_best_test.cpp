// Apply-history-best: the best valid record per (workload, target) across templates, the
// dispatch with its untuned fallback, and the best record per task.
#include "tuner/history_best.h"

#include <gtest/gtest.h>

#include "compiler/base/error.h"
#include "tests/tuner/records_test_util.h"

namespace kiln::tuner {
namespace {

using testing::DenseTask;
using testing::TempDir;

TEST(HistoryBest, PicksTheFastestRepeatAmongValidRecords) {
  DenseTask task;
  HistoryBest best({
      task.record(1, {4e-5, 4e-5}),
      task.record(2, {5e-5, 1.5e-5}),                          // fastest 1.5e-5: the best valid one
      task.record(3, {1e-6}, MeasureErrorKind::WrongResult),   // fast but wrong
      task.record(4, {1e-7}, MeasureErrorKind::RuntimeError),  // costs of a crash mean nothing
      task.record(5, {}, MeasureErrorKind::CompileError),
      task.record(6, {2e-5, 2e-5}),  // the best by the mean (2e-5 against 3.25e-5)
  });
  std::optional<BestConfig> q = best.query(task.workload, task.target);
  ASSERT_TRUE(q);
  EXPECT_EQ(q->tpl->name(), "dense.packed");
  EXPECT_EQ(q->config, task.space().at(2));
  EXPECT_DOUBLE_EQ(q->record.result.cost(), 1.5e-5);
  EXPECT_EQ(best.size(), 1u);

  Dispatch d = best.dispatch(task.workload, task.target);
  EXPECT_FALSE(d.untuned);
  EXPECT_EQ(d.tpl->name(), "dense.packed");
  EXPECT_EQ(d.config, task.space().at(2));
  ASSERT_TRUE(d.record);
}

// A task's end-of-tune re-measurement decides: the trials' luckiest figures do not.
TEST(HistoryBest, ReMeasurementsDecideWhereATaskHasThem) {
  DenseTask task;
  auto remeasured = [&](uint64_t index, double cost) {
    TuningRecord r = task.record(index, {cost});
    r.result.message = kRemeasured;
    return r;
  };
  std::vector<TuningRecord> records = {
      task.record(3, {1.5e-5}),  // never re-measured: not a candidate once the task has some
      task.record(1, {1e-5}),    // a lucky trial: 3e-5 side by side
      task.record(2, {2e-5}),
      remeasured(1, 3e-5),
      remeasured(2, 2.5e-5),
      remeasured(3, 1e-6) /* wrong */,
  };
  records.back().result.error = MeasureErrorKind::WrongResult;
  records.back().result.message = "wrong on purpose";
  HistoryBest best(records);
  ASSERT_TRUE(best.query(task.workload, task.target));
  EXPECT_EQ(best.query(task.workload, task.target)->config, task.space().at(2));
  EXPECT_DOUBLE_EQ(best.query(task.workload, task.target)->record.result.cost(), 2.5e-5);
  EXPECT_EQ(best_per_task(records).at(0).config, task.space().at(2));

  // Each config is judged by its latest re-measurement (a resumed tune re-measures again).
  records.push_back(remeasured(2, 4e-5));
  EXPECT_EQ(HistoryBest(records).query(task.workload, task.target)->config, task.space().at(1));

  // Settled records settle to themselves; a task never re-measured keeps every record.
  std::vector<TuningRecord> settled = settle_records(records);
  ASSERT_EQ(settled.size(), 2u);
  EXPECT_EQ(settle_records(settled).size(), 2u);
  DenseTask other;
  other.workload.params["M"] = 128;
  records.push_back(other.record(1, {1e-5}));
  records.push_back(other.record(2, {2e-5}));
  EXPECT_EQ(settle_records(records).size(), 4u);
}

// The untuned config (a tune's first trial) timed again beside the best at the end stays
// unless the best beats it beyond noise: a luckier minimum alone is not a gain.
TEST(HistoryBest, TheUntunedConfigIsKeptUnlessBeatenBeyondNoise) {
  DenseTask task;
  auto remeasured = [&](uint64_t index, std::vector<double> costs) {
    TuningRecord r = task.record(index, std::move(costs));
    r.result.message = kRemeasured;
    return r;
  };
  // Config 1 is the untuned one (measured first), timed again beside config 2 at the end.
  auto log_with = [&](std::vector<double> config_2_times) {
    return std::vector<TuningRecord>{
        task.record(1, {1.1e-5}), task.record(2, {1.0e-5}),
        remeasured(1, {1.00e-5, 1.03e-5, 1.05e-5, 1.08e-5, 1.10e-5, 1.12e-5}),
        remeasured(2, std::move(config_2_times))};
  };
  // Config 2's repeats interleave with config 1's: its minimum is lower, its times are not.
  const std::vector<TuningRecord> noisy =
      log_with({0.99e-5, 1.02e-5, 1.06e-5, 1.07e-5, 1.09e-5, 1.13e-5});
  std::optional<BestConfig> kept = HistoryBest(noisy).query(task.workload, task.target);
  ASSERT_TRUE(kept);
  EXPECT_EQ(kept->config, task.space().at(1));
  EXPECT_EQ(kept->verdict.rfind("within noise of the untuned config (", 0), 0u) << kept->verdict;
  EXPECT_EQ(best_per_task(noisy).at(0).config, task.space().at(1));
  EXPECT_EQ(pin_records(noisy).at(0).config, task.space().at(1));

  // Every time of config 2 below every time of config 1: a gain, stated with its confidence.
  const std::vector<TuningRecord> clear =
      log_with({0.80e-5, 0.81e-5, 0.83e-5, 0.84e-5, 0.86e-5, 0.90e-5});
  std::optional<BestConfig> tuned = HistoryBest(clear).query(task.workload, task.target);
  ASSERT_TRUE(tuned);
  EXPECT_EQ(tuned->config, task.space().at(2));
  EXPECT_EQ(tuned->verdict, "1.28x faster than the untuned config (p=0.0011, 6 vs 6 times)");
  Dispatch d = HistoryBest(clear).dispatch(task.workload, task.target);
  EXPECT_EQ(d.verdict, tuned->verdict);

  // Without the untuned config among the re-measured, the best re-measured wins as before.
  std::vector<TuningRecord> without = {task.record(3, {1e-5}), task.record(1, {1e-5}),
                                       remeasured(1, {1.1e-5}), remeasured(2, {1.0e-5})};
  EXPECT_EQ(HistoryBest(without).query(task.workload, task.target)->config, task.space().at(2));
  EXPECT_TRUE(HistoryBest(without).query(task.workload, task.target)->verdict.empty());
}

TEST(HistoryBest, OnlyErrorsMeansUntuned) {
  DenseTask task;
  HistoryBest best({task.record(3, {1e-6}, MeasureErrorKind::WrongResult),
                    task.record(4, {}, MeasureErrorKind::RunTimeout)});
  EXPECT_FALSE(best.query(task.workload, task.target));
  EXPECT_TRUE(best.dispatch(task.workload, task.target).untuned);
}

TEST(HistoryBest, ChoosesAcrossTemplatesOfTheWorkload) {
  // A 1x1 convolution has two templates: the general blocked one and the 1x1 one.
  Target target = target_from_name("x86-avx2");
  schedules::Workload w{"conv2d",
                        {{"N", 1}, {"C", 16}, {"H", 8}, {"W", 8}, {"O", 16}, {"KH", 1}, {"KW", 1}},
                        ir::DataType::f32(),
                        {}};
  std::vector<const schedules::OpTemplate*> tpls = schedules::templates_for(w, target);
  ASSERT_GE(tpls.size(), 2u);
  std::vector<TuningRecord> records;
  double cost = 5e-5;
  for (const schedules::OpTemplate* tpl : tpls) {
    TuningRecord r;
    r.target = target;
    r.template_name = tpl->name();
    r.workload = w;
    r.config = tpl->fallback(w, target);
    r.result.costs = {cost};
    r.flops = 1e6;
    records.push_back(r);
    cost /= 2;  // the last template is the fastest
  }
  HistoryBest best(records);
  std::optional<BestConfig> q = best.query(w, target);
  ASSERT_TRUE(q);
  EXPECT_EQ(q->tpl, tpls.back());
  EXPECT_EQ(q->config, tpls.back()->fallback(w, target));
  // Other targets and other workloads have nothing tuned.
  EXPECT_FALSE(best.query(w, target_from_name("arm-neon")));
  schedules::Workload bigger = w;
  bigger.params["O"] = 32;
  EXPECT_FALSE(best.query(bigger, target));
}

TEST(HistoryBest, UntunedFallsBackToTheDefaultTemplatesFallback) {
  DenseTask task;
  HistoryBest best({task.record(1, {1e-5})});
  Target neon = target_from_name("arm-neon");
  Dispatch d = best.dispatch(task.workload, neon);
  EXPECT_TRUE(d.untuned);
  EXPECT_FALSE(d.record);
  const schedules::OpTemplate* default_tpl = schedules::templates_for(task.workload, neon).front();
  EXPECT_EQ(d.tpl, default_tpl);
  EXPECT_EQ(d.config, default_tpl->fallback(task.workload, neon));

  schedules::Workload nothing{"frobnicate", {}, ir::DataType::f32(), {}};
  EXPECT_THROW(best.dispatch(nothing, neon), UserError);
}

TEST(HistoryBest, FromLogsSkipsBadLinesAndReportsThem) {
  TempDir dir;
  DenseTask task;
  RecordWriter(dir.file("a.jsonl")).append({task.record(1, {4e-5})});
  RecordWriter(dir.file("b.jsonl")).append({task.record(2, {2e-5})});
  testing::write_text(dir.file("b.jsonl"), "not json\n", std::ios::app);
  std::vector<RecordProblem> problems;
  HistoryBest best = HistoryBest::from_logs({dir.file("a.jsonl"), dir.file("b.jsonl")}, &problems);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].line, 2u);
  ASSERT_TRUE(best.query(task.workload, task.target));
  EXPECT_EQ(best.query(task.workload, task.target)->config, task.space().at(2));
}

TEST(HistoryBest, BestPerTaskKeepsOneRecordPerTask) {
  DenseTask task;
  DenseTask other;
  other.workload.params["M"] = 128;
  std::vector<TuningRecord> best = best_per_task({
      task.record(1, {4e-5}),
      other.record(1, {9e-5}),
      task.record(2, {2e-5}),
      other.record(3, {}, MeasureErrorKind::CompileError),
      task.record(3, {3e-5}),
  });
  ASSERT_EQ(best.size(), 2u);
  EXPECT_EQ(best[0].config, task.space().at(2));
  EXPECT_EQ(best[1].workload.param("M"), 128);
  EXPECT_EQ(best[1].config, other.space().at(1));
}

}  // namespace
}  // namespace kiln::tuner
