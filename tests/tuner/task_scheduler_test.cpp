// The task scheduler's allocation, with no device: each task's "tuning" is a made-up curve of
// its best time against the trials it was given (the scheduler's input, not a stand-in for a
// kiln component), so what is checked is only where the budget goes.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <thread>

#include "tuner/task_scheduler.h"

namespace kiln::tuner {
namespace {

// Best time of a task after n trials: `base` falling towards `base x floor` as it improves.
struct Curve {
  double base = 1e-3;
  double floor = 0.5;  // 1: never improves
  double scale = 64;   // trials for the gap to shrink by e
  double at(size_t n) const { return base * (floor + (1 - floor) * std::exp(-double(n) / scale)); }
};

struct FakeNetwork {
  std::vector<Curve> curves;
  std::vector<size_t> given;  // trials measured per task
  std::vector<size_t> order;  // the task of each slice
  size_t finish_after = SIZE_MAX;  // trials after which a task says it is finished

  explicit FakeNetwork(std::vector<Curve> c) : curves(std::move(c)), given(curves.size()) {}
  TuneSliceFn fn() {
    return [this](size_t task, size_t trials) {
      order.push_back(task);
      given[task] += trials;
      return SliceResult{trials, curves[task].at(given[task]), given[task] >= finish_after};
    };
  }
};

std::vector<ScheduledTask> weighted(const std::vector<double>& weights) {
  std::vector<ScheduledTask> t;
  for (double w : weights) {
    t.emplace_back();
    t.back().weight = w;
  }
  return t;
}

SchedulerOptions budget(size_t trials, size_t slice = 16) {
  SchedulerOptions o;
  o.trials = trials;
  o.slice = slice;
  return o;
}

const std::atomic<bool> kNoStop = false;

TEST(TaskScheduler, WarmsUpEveryTaskOnceInOrder) {
  FakeNetwork net({{}, {}, {}, {}});
  TaskScheduler s(weighted({1, 5, 2, 1}), budget(4 * 16));
  s.run(net.fn(), kNoStop);
  EXPECT_EQ(net.order, (std::vector<size_t>{0, 1, 2, 3}));
}

TEST(TaskScheduler, HeavierTasksGetMoreTrials) {
  FakeNetwork net({{}, {}, {}});  // the same curve; the middle task runs ten times per inference
  TaskScheduler s(weighted({1, 10, 1}), budget(480));
  s.run(net.fn(), kNoStop);
  EXPECT_EQ(s.total_trials(), 480u);
  EXPECT_GT(net.given[1], 2 * net.given[0]);
  EXPECT_GT(net.given[1], 2 * net.given[2]);
  EXPECT_GE(net.given[0], 16u);  // the warm-up slice at least
}

TEST(TaskScheduler, SlowerTasksGetMoreTrials) {
  // Same weight, one task ten times slower: its improvements shorten the latency more.
  FakeNetwork net({{1e-3}, {1e-2}});
  TaskScheduler s(weighted({1, 1}), budget(320));
  s.run(net.fn(), kNoStop);
  EXPECT_GT(net.given[1], 2 * net.given[0]);
}

TEST(TaskScheduler, LatencyEstimateIsWeightTimesBest) {
  FakeNetwork net({{1e-3, 1.0}, {2e-3, 1.0}});
  TaskScheduler s(weighted({3, 2}), budget(64));
  bool complete = true;
  EXPECT_EQ(s.estimated_latency_s(&complete), 0);
  EXPECT_FALSE(complete);
  s.run(net.fn(), kNoStop);
  EXPECT_DOUBLE_EQ(s.estimated_latency_s(&complete), 3 * 1e-3 + 2 * 2e-3);
  EXPECT_TRUE(complete);
}

TEST(TaskScheduler, FinishedTasksAreNeverPickedAgain) {
  FakeNetwork net({{}, {}, {}});
  net.finish_after = 32;
  TaskScheduler s(weighted({1, 1, 1}), budget(10000));
  s.run(net.fn(), kNoStop);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(net.given[i], 32u);
    EXPECT_TRUE(s.finished(i));
  }
  EXPECT_EQ(s.pick(), TaskScheduler::npos);
}

TEST(TaskScheduler, ATaskThatMeasuresNothingIsFinished) {
  TaskScheduler s(weighted({1, 1}), budget(1000));
  std::vector<size_t> calls(2);
  s.run([&](size_t task, size_t n) {
    ++calls[task];
    return task == 0 ? SliceResult{0, 0, false} : SliceResult{n, 1e-3, false};
  }, kNoStop);
  EXPECT_EQ(calls[0], 1u);
  EXPECT_EQ(s.trials(1), 1000u);
}

TEST(TaskScheduler, TheLastSliceIsCutToTheBudget) {
  FakeNetwork net({{}, {}});
  TaskScheduler s(weighted({1, 1}), budget(40));
  s.run(net.fn(), kNoStop);
  EXPECT_EQ(s.total_trials(), 40u);
  EXPECT_EQ(net.given[0] + net.given[1], 40u);
}

TEST(TaskScheduler, ResumedTrialsCountAgainstTheBudgetAndSkipTheWarmUp) {
  FakeNetwork net({{}, {}});
  std::vector<ScheduledTask> tasks = weighted({1, 1});
  tasks[0].trials = 48;  // from the log
  tasks[0].best_cost_s = 1e-3;
  TaskScheduler s(tasks, budget(64));
  s.run(net.fn(), kNoStop);
  EXPECT_EQ(net.order, (std::vector<size_t>{1}));
  EXPECT_EQ(s.total_trials(), 64u);
}

TEST(TaskScheduler, StopsAtTheTimeBudget) {
  SchedulerOptions o = budget(100000);
  o.time_budget_s = 0.1;
  TaskScheduler s(weighted({1, 1}), o);
  const auto t0 = std::chrono::steady_clock::now();
  s.run([](size_t, size_t n) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    return SliceResult{n, 1e-3, false};
  }, kNoStop);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_GE(took, 0.1);
  EXPECT_LT(took, 1.0);
  EXPECT_LT(s.total_trials(), 100000u);
}

TEST(TaskScheduler, StopsWhenAskedAndKeepsTheMeasuredTrials) {
  std::atomic<bool> stop = false;
  TaskScheduler s(weighted({1, 1}), budget(1000));
  size_t slices = 0;
  s.run([&](size_t, size_t n) {
    if (++slices == 3) stop = true;
    return SliceResult{n, 1e-3, false};
  }, stop);
  EXPECT_EQ(slices, 3u);
  EXPECT_EQ(s.total_trials(), 48u);
}

TEST(TaskScheduler, AGroupsFasterMemberPullsTrialsToASlowOne) {
  // Two tasks of one template with equal FLOPS: the second runs at a quarter of the first's
  // throughput, so the group estimate says it has the most to gain.
  FakeNetwork net({{1e-3, 1.0}, {4e-3, 0.25, 200}});
  std::vector<ScheduledTask> tasks = weighted({1, 1});
  for (ScheduledTask& t : tasks) t.group = "conv2d.nchwc", t.flops = 1e6;
  TaskScheduler s(tasks, budget(320));
  s.run(net.fn(), kNoStop);
  EXPECT_GT(net.given[1], 2 * net.given[0]);
}

TEST(TaskScheduler, AlternativesCountOnceAtTheirBestTime) {
  // Two templates of one workload (3 calls) and another workload (1 call).
  FakeNetwork net({{1e-3, 1.0}, {2e-3, 1.0}, {5e-3, 1.0}});
  std::vector<ScheduledTask> tasks = weighted({3, 3, 1});
  tasks[0].alternatives = tasks[1].alternatives = "conv A";
  TaskScheduler s(tasks, budget(48));
  s.run(net.fn(), kNoStop);
  bool complete = false;
  EXPECT_DOUBLE_EQ(s.estimated_latency_s(&complete), 3 * 1e-3 + 5e-3);
  EXPECT_TRUE(complete);
}

TEST(TaskScheduler, AnAlternativeFarBehindGetsFewTrials) {
  // The second template of a workload is ten times slower than the first and improves only
  // slowly: its trials are better spent on the first.
  FakeNetwork net({{1e-3, 0.5}, {1e-2, 0.5, 400}});
  std::vector<ScheduledTask> tasks = weighted({1, 1});
  tasks[0].alternatives = tasks[1].alternatives = "conv A";
  TaskScheduler s(tasks, budget(320));
  s.run(net.fn(), kNoStop);
  EXPECT_GT(net.given[0], 2 * net.given[1]);
}

TEST(TaskScheduler, AnAlternativeFarBehindGetsNoTrialsAfterItsWarmUp) {
  // Task 1 is a general template on a workload whose other template (task 0) is 100x faster;
  // its group (task 2, same template, other workload) runs fast, which alone would make it
  // look the most promising. After the warm-up it gets nothing more.
  FakeNetwork net({{1e-4, 0.9}, {1e-2, 0.5, 50}, {1e-3, 0.5}});
  std::vector<ScheduledTask> tasks = weighted({1, 1, 1});
  tasks[0].alternatives = tasks[1].alternatives = "depthwise A";
  tasks[1].group = tasks[2].group = "conv2d.nchwc";
  tasks[1].flops = tasks[2].flops = 1e6;
  SchedulerOptions o = budget(320);
  TaskScheduler s(tasks, o);
  s.run(net.fn(), kNoStop);
  EXPECT_EQ(net.given[1], o.warmup ? o.warmup : o.slice);
  EXPECT_GT(net.given[2], net.given[1]);
}

}  // namespace
}  // namespace kiln::tuner
