// Tuning one task (a template, a workload, a target): the loop of AutoTVM's Tuner.tune.
// Propose a batch of configs (tuner/search), build them on every core while the previous
// batch is measured (lower here, codegen in a child process killed at the build timeout:
// tuner/isolated_compile.h; a failure is recorded, never fatal), measure on a
// runner (farm or local), judge each result against the reference, let the search (and its
// cost model) learn, and hand the batch's records to the caller's measure callbacks (as
// MetaSchedule's: the log, which is flushed so a killed run resumes from it; progress lines;
// a scheduler's bookkeeping), repeat. At the end the best few are
// measured again, together, and the best of that re-measurement wins.
//
// A TaskTuner keeps its state between calls to tune(), so a scheduler can hand it trials a
// slice at a time across the tasks of a network.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cost_model/cost_model.h"
#include "schedules/op_template.h"
#include "compiler/target/target.h"
#include "tuner/measure/job.h"
#include "tuner/measure/runner.h"
#include "tuner/records.h"
#include "tuner/search/search.h"

namespace kiln::tuner {

struct TuneTask {
  const schedules::OpTemplate* tpl = nullptr;
  schedules::Workload workload;
  Target target;
  // Knobs the search keeps at these values (ConfigSpace::pinned): a network's channel blocks,
  // so that tuned kernels read and write the layouts their neighbours do.
  schedules::Config pinned;
  // Configs measured before any the search proposes (those in the space and not measured
  // yet): a network tune's untuned choice, so apply-history-best weighs every tuned record
  // against the kernel an untuned compile would build. Without it a short tune could
  // compile a record slower than that kernel, the only record of its workload.
  std::vector<schedules::Config> first;
  std::string str() const;  // "dense.packed dense M=... f32 on x86-avx512"
};

class FarmBuilders;  // tuner/measure/farm_builders.h

struct TuneOptions {
  std::string search = "xgb";    // xgb, ga, random, grid
  std::string features = "ir";   // the cost model's features: "ir" (loop IR) or "knob"
  uint64_t seed = 0;
  size_t batch = 16;             // candidates per batch
  size_t early_stopping = 0;     // stop after this many trials without a better config (0: never)
  unsigned build_threads = 0;    // 0: one per core
  // Build the next batch while this one is measured. Right when the devices are other
  // machines; wrong when the farm's workers share this machine's cores (the embedded farm):
  // the compiler then competes with the kernels being timed, which swings each timing by
  // tens of percent and gains no throughput once every core is busy anyway. Off, the next
  // batch is proposed after this one's results are learned.
  bool overlap_builds = true;
  double build_timeout_s = 60;   // a candidate still compiling then is killed (compile_timeout)
  // Compile candidates on the farm's builders instead of this machine's cores (lowering stays
  // here): tuner/measure/farm_builders.h. Null: here.
  std::shared_ptr<FarmBuilders> builders;
  // `kiln tune --runner analyze`: each candidate's time predicted by llvm-mca with the target
  // CPU's model (tuner/predict.h) in the builder's child instead of measured; no runner runs,
  // nothing is re-measured, and the records say "predicted" (MeasuredOn::predicted).
  bool predict = false;
  size_t remeasure_top = 5;      // the best few measured again together at the end (0: none)
  uint32_t remeasure_rounds = 5;  // ... in this many rounds, each in a new order
  double rtol = 0;               // 0: the dtype's tolerance (tuner/host_values.h)
  MeasureOptions measure;
  PriorSamples prior;            // transferred samples (--transfer), for the xgb search
  // A saved cost model (CostModel::save) the xgb search starts from: its first batches are
  // model-guided before this task has samples of its own. "" or a missing file: none.
  std::string initial_model;
};

struct TuneStatus {
  size_t trials = 0;        // measured so far by this tuner (resumed ones excluded)
  size_t budget = 0;        // trials asked for in this call, plus those before it
  double last_gflops = 0;   // the best of the latest batch
  double best_gflops = 0;   // the best so far, resumed records included
  size_t errors = 0;        // candidates that failed (any error kind, wrong results included)
  double elapsed_s = 0;
};

using ProgressFn = std::function<void(const TuneStatus&)>;

class TaskTuner;
// What happens to each measured batch once the search has learned from it: called in order,
// with the tuner (its status() already counts the batch) and the batch's records (cancelled
// candidates, which never ran, left out).
using MeasureCallback =
    std::function<void(const TaskTuner& tuner, const std::vector<TuningRecord>& records)>;
using MeasureCallbacks = std::vector<MeasureCallback>;
// The usual two: append the records to a log, and report the tuner's status.
MeasureCallback append_to(RecordWriter& log);
MeasureCallback report_progress(ProgressFn progress);

class TaskTuner {
 public:
  // `history`: this task's records from earlier runs (resume): never measured again, learned
  // from, and counted in the best.
  TaskTuner(TuneTask task, TuneOptions options, const std::vector<TuningRecord>& history = {});
  ~TaskTuner();

  // Measures up to `trials` more configs (fewer when the space runs out, early stopping
  // triggers, or `stop` is set), handing each batch's records to `callbacks`.
  void tune(size_t trials, Runner& runner, const MeasureCallbacks& callbacks,
            const std::atomic<bool>& stop);
  // Measures the best few again in one batch (options.remeasure_top) and hands their records
  // to `callbacks`.
  void remeasure_best(Runner& runner, const MeasureCallbacks& callbacks,
                      const std::atomic<bool>& stop);

  const TuneTask& task() const { return task_; }
  const TuneStatus& status() const { return status_; }
  // The best correct record so far (resumed ones included).
  const std::optional<TuningRecord>& best() const { return best_; }
  bool finished() const;  // space exhausted or stopped early
  size_t space_size() const;
  // GFLOPS of the best after each trial of this tuner (for curves and schedulers).
  const std::vector<double>& curve() const { return curve_; }
  // Other tasks' samples for the cost model (see SearchStrategy::set_prior), replacing the
  // options' prior.
  void set_prior(PriorSamples prior);
  // The cost model, when the search has one (to save beside the log).
  const cost_model::CostModel* model() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  TuneTask task_;
  TuneStatus status_;
  std::optional<TuningRecord> best_;
  std::vector<double> curve_;
};

}  // namespace kiln::tuner
