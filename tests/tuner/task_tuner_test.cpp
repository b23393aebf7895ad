// TaskTuner's end of a tune: the best few and the configs measured first (a network's untuned
// kernel) are measured again side by side, in rounds, since that re-measurement decides what is
// deployed (settle_records); its resumed best; and when it builds a batch relative to measuring
// one. Real builds, measured in the kernel runner's sandbox.
#include "tuner/task_tuner.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include "runtime/process/temp_dir.h"
#include "schedules/registry.h"
#include "tuner/measure/local_runner.h"
#include "tuner/measure/predicted_runner.h"

namespace kiln::tuner {
namespace {

const schedules::OpTemplate& dense_packed() { return schedules::template_named("dense.packed"); }

schedules::Workload dense(int64_t m, int64_t n, int64_t k) {
  return {"dense", {{"M", m}, {"N", n}, {"K", k}}, ir::DataType::f32(), {}};
}

// The dense fallback narrowed to one row by one vector, unrolled once: one accumulator, which
// the best of a few random configs beats.
schedules::Config one_accumulator(const schedules::Workload& w, const Target& target) {
  schedules::Config c = dense_packed().fallback(w, target);
  c.set("mr", 1);
  c.set("nr_vecs", 1);
  c.set("k_unroll", 1);
  return c;
}

// `trials` tuned, then the best re-measured, all logged to `path`: the log's records.
std::vector<TuningRecord> tune_and_remeasure(TaskTuner& tuner, Runner& runner, size_t trials,
                                             const std::string& path) {
  {
    RecordWriter log(path);
    std::atomic<bool> stop{false};
    tuner.tune(trials, runner, {append_to(log)}, stop);
    tuner.remeasure_best(runner, {append_to(log)}, stop);
  }
  return load_records({path}).records;
}

// Random search in batches of 4.
TuneOptions random_search(uint64_t seed) {
  TuneOptions o;
  o.search = "random";
  o.seed = seed;
  o.batch = 4;
  return o;
}

// `kiln tune --runner analyze`: every candidate's time predicted by llvm-mca for a core this
// machine is not (Cortex-A72), the records labelled predicted, and nothing run or re-measured;
// the one-accumulator config predicted slower than the fallback's register tile.
TEST(TaskTuner, PredictsTimesForABoardThatIsNotConnected) {
  TempDir dir("kiln-task-tuner-test");
  const Target target = target_from_name("cortex-a72");
  const schedules::OpTemplate& tpl = dense_packed();
  const schedules::Workload w = dense(48, 48, 64);
  const schedules::Config slow = one_accumulator(w, target);
  TuneOptions o = random_search(5);
  o.predict = true;
  TaskTuner tuner(TuneTask{&tpl, w, target, {}, {tpl.fallback(w, target), slow}}, o);
  PredictedRunner runner;
  std::vector<TuningRecord> records = tune_and_remeasure(tuner, runner, 8, dir.file("log.jsonl"));
  ASSERT_EQ(records.size(), 8u);  // nothing re-measured
  for (const TuningRecord& r : records) {
    EXPECT_EQ(r.result.device_key, "llvm-mca");
    if (!r.result.ok()) continue;  // a config whose kernel has no multiply-accumulate loop
    EXPECT_TRUE(r.result.measured_on.predicted());
    EXPECT_EQ(r.result.measured_on.cpu(), "predicted by llvm-mca with the cortex-a72 model");
    ASSERT_EQ(r.result.costs.size(), 1u);
    EXPECT_GT(r.result.costs[0], 0);
  }
  ASSERT_TRUE(records[0].result.ok() && records[1].result.ok());
  EXPECT_GT(records[1].result.cost(), 2 * records[0].result.cost());
}

TEST(TaskTuner, ReMeasuresTheFirstConfigsBesideTheBest) {
  TempDir dir("kiln-task-tuner-test");
  const Target target = target_from_name("host");
  const schedules::OpTemplate& tpl = dense_packed();
  const schedules::Workload w = dense(64, 64, 64);
  // A config to start from that the best of a few random ones beats.
  const schedules::Config slow = one_accumulator(w, target);
  TuneOptions o = random_search(3);
  o.remeasure_top = 1;
  o.remeasure_rounds = 2;
  o.measure.repeat = 2;
  o.measure.min_repeat_ms = 1;
  TaskTuner tuner(TuneTask{&tpl, w, target, {}, {slow}}, o);
  LocalRunner runner(farm::SandboxConfig{KILN_KERNEL_RUNNER, {}, 8192});
  const std::string path = dir.file("log.jsonl");
  std::vector<TuningRecord> records = tune_and_remeasure(tuner, runner, 12, path);
  ASSERT_GE(records.size(), 13u);
  EXPECT_EQ(records.front().config, slow);  // measured first
  std::set<std::string> remeasured;
  for (const TuningRecord& r : records) {
    if (r.result.message != kRemeasured) continue;
    remeasured.insert(r.config.to_json());
    // One record per config, holding both rounds' repeats (at least 3 a round).
    EXPECT_EQ(r.result.costs.size(), 2u * 3u) << r.config.to_json();
  }
  EXPECT_TRUE(remeasured.count(slow.to_json())) << "the first config was not measured again";
  ASSERT_TRUE(tuner.best());
  EXPECT_TRUE(remeasured.count(tuner.best()->config.to_json()));
  EXPECT_LE(remeasured.size(), 2u);  // the top 1 and the first config
}

// A resumed task starts its running best (progress, the scheduler's weights) from what
// apply-history-best would deploy from the log: the earlier run's re-measurements, not a
// lucky trial figure.
TEST(TaskTuner, ResumedBestIsTheSettledOne) {
  const Target target = target_from_name("host");
  const schedules::OpTemplate& tpl = schedules::template_named("dense.packed");
  const schedules::Workload w{"dense", {{"M", 64}, {"N", 64}, {"K", 64}}, ir::DataType::f32(), {}};
  const schedules::ConfigSpace space = tpl.space(w, target);
  auto record = [&](uint64_t index, double cost, const std::string& message) {
    TuningRecord r;
    r.target = target;
    r.template_name = tpl.name();
    r.workload = w;
    r.config = space.at(index);
    r.result.costs = {cost};
    r.result.message = message;
    r.flops = 2.0 * 64 * 64 * 64;
    return r;
  };
  // Config 0's trial was lucky; measured again beside config 1, it is the slower. (The first
  // trial, the untuned config 2, was not measured again: no rank test against it.)
  const std::vector<TuningRecord> history = {record(2, 5e-5, ""), record(0, 1e-5, ""),
                                             record(1, 2e-5, ""),
                                             record(0, 4e-5, kRemeasured),
                                             record(1, 3e-5, kRemeasured)};
  TuneOptions o;
  o.search = "random";
  TaskTuner tuner(TuneTask{&tpl, w, target, {}, {}}, o, history);
  ASSERT_TRUE(tuner.best());
  EXPECT_EQ(tuner.best()->config, space.at(1));
  EXPECT_DOUBLE_EQ(tuner.best()->result.cost(), 3e-5);
  EXPECT_DOUBLE_EQ(tuner.status().best_gflops, tuner.best()->gflops());
}

// Whether this process has a child process now: the builder compiles each candidate in a
// forked child (tuner/isolated_compile.h), so a child means a build in flight.
bool has_child_process() {
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream children(task.path() / "children");
    std::string pid;
    if (children >> pid) return true;
  }
  return false;
}

// The real local runner, which first watches, for up to `watch_ms`, whether a build is in
// flight while the batch is about to be measured.
class BuildWatchingRunner : public Runner {
 public:
  explicit BuildWatchingRunner(int watch_ms) : watch_ms_(watch_ms) {}
  std::vector<RunResult> run(std::vector<MeasureInput> inputs, const ResultFn& on_result,
                             const std::atomic<bool>& stop) override {
    ++batches;
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(watch_ms_);
    while (std::chrono::steady_clock::now() < until) {
      if (has_child_process()) {
        ++batches_measured_while_building;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return local_.run(std::move(inputs), on_result, stop);
  }
  std::string device() const override { return local_.device(); }
  int batches = 0, batches_measured_while_building = 0;

 private:
  int watch_ms_;
  LocalRunner local_{farm::SandboxConfig{KILN_KERNEL_RUNNER, {}, 8192}};
};

// With overlap_builds off (kiln tune's embedded farm), nothing compiles while a batch is
// timed; on (a farm of other machines), the next batch compiles meanwhile.
TEST(TaskTuner, OverlapsBuildsWithMeasuringOnlyWhenAskedTo) {
  TempDir dir("kiln-task-tuner-test");
  const Target target = target_from_name("host");
  const schedules::OpTemplate& tpl = schedules::template_named("dense.packed");
  const schedules::Workload w{"dense", {{"M", 64}, {"N", 64}, {"K", 64}}, ir::DataType::f32(), {}};
  for (bool overlap : {false, true}) {
    TuneOptions o;
    o.search = "random";
    o.batch = 3;
    o.remeasure_top = 0;
    o.measure.repeat = 1;
    o.measure.min_repeat_ms = 1;
    o.overlap_builds = overlap;
    TaskTuner tuner(TuneTask{&tpl, w, target, {}, {}}, o);
    BuildWatchingRunner runner(overlap ? 2000 : 300);
    RecordWriter log(dir.file(overlap ? "on.jsonl" : "off.jsonl"));
    std::atomic<bool> stop{false};
    tuner.tune(9, runner, {append_to(log)}, stop);
    EXPECT_EQ(tuner.status().trials, 9u);
    ASSERT_EQ(runner.batches, 3);
    if (overlap)  // every batch but the last has a successor compiling
      EXPECT_EQ(runner.batches_measured_while_building, 2);
    else
      EXPECT_EQ(runner.batches_measured_while_building, 0);
  }
}

}  // namespace
}  // namespace kiln::tuner
