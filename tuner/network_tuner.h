// Tuning a whole network (`kiln tune MODEL.onnx`): one TaskTuner per (workload, template)
// pair of the network's extracted workloads, driven by the task scheduler
// (tuner/task_scheduler.h), which hands out the trial budget a batch at a time where it
// shortens the network's estimated latency most.
//
// - Resume: the log's records of each task are its history (never measured again), count
//   against the trial budget, and give the scheduler each task's best time to start from.
// - Tasks of one template share the cost model's training data: before each slice, a task's
//   model-based search gets the other tasks' records of its template (from the log, this run
//   and --transfer logs) as prior samples, refreshed as new records arrive.
// - The cost model is saved per template beside the log (model_path: LOG.<template>.xgb, written
//   atomically) when the tune ends, from the template's task tuned last that has a trained
//   model (it learned from the template's other tasks' records as well as its own). A resumed run, or one given --transfer logs with such
//   files beside them, starts each task's search from its template's saved model, so even a
//   task's first batch is model-guided (own file first, else the first --transfer log's).
// - The estimated latency is the sum over workloads of calls x the best time among its
//   templates (workloads with no correct measurement yet are not counted, and said so).
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tuner/task_scheduler.h"
#include "tuner/task_tuner.h"
#include "tuner/transfer.h"

namespace kiln::tuner {

// A workload of the network, as task extraction finds it.
struct NetworkWorkload {
  schedules::Workload workload;
  int occurrences = 1;                                  // kernel calls computing it
  std::vector<const schedules::OpTemplate*> templates;  // every template that applies
  schedules::Config pinned;  // knobs every template's search keeps (TuneTask::pinned)
  // What an untuned compile builds it with, measured first by that template's task
  // (TuneTask::first) so the records can show whether tuning beat it; none: nothing.
  const schedules::OpTemplate* untuned_template = nullptr;
  schedules::Config untuned_config;
};

struct NetworkTuneOptions {
  TuneOptions task;           // per task: search, batch (the scheduler's slice), measure...
  size_t trials = 0;          // the network's budget, the log's trials of its tasks included
  double time_budget_s = 0;   // of this run (0: none)
  // Trials of each task's first slice. Small, so every task has a time early (a network has
  // dozens of tasks, and which is slow is known only once measured); 0: a whole batch.
  size_t warmup = 4;
  std::vector<std::string> transfer;  // earlier logs the cost models learn from
  // The log the per-template cost models are saved beside and loaded from (model_path);
  // "": none saved or loaded. Only the xgb search on IR features saves them.
  std::string model_log;
};

// Where the cost model of `template_name`'s tasks is saved beside `log`.
std::string model_path(const std::string& log, const std::string& template_name);

// Where a network tune stands, after each measured batch.
struct NetworkProgress {
  size_t task = 0, tasks = 0;   // the task being tuned (0-based) and how many there are
  const TuneTask* current = nullptr;
  TuneStatus status;            // of the current task
  bool slice_done = false;      // the task's slice has ended (else: a batch within it)
  double latency_s = 0;         // estimate over the measured workloads
  size_t measured_workloads = 0, workloads = 0;
  size_t trials = 0, budget = 0;  // the network's, resumed ones included
};

using NetworkProgressFn = std::function<void(const NetworkProgress&)>;

// One task's outcome, for the summary.
struct NetworkTaskSummary {
  TuneTask task;
  int occurrences = 0;
  size_t trials = 0;  // resumed ones included
  std::optional<TuningRecord> best;
};

class NetworkTuner {
 public:
  // `log`: the records the log holds already (for the target), for resume.
  NetworkTuner(const std::vector<NetworkWorkload>& workloads, const Target& target,
               NetworkTuneOptions options, const std::vector<TuningRecord>& log);
  ~NetworkTuner();

  // Tunes until a budget is spent, every task finished or `stop` is set; then, unless
  // stopped, measures each tuned task's best few again (TuneOptions::remeasure_top).
  void tune(Runner& runner, RecordWriter& log, const std::atomic<bool>& stop,
            const NetworkProgressFn& progress = nullptr);

  size_t tasks() const;
  size_t workloads() const { return workloads_; }
  size_t resumed_trials() const { return resumed_; }
  double estimated_latency_s(size_t* measured_workloads = nullptr) const;
  std::vector<NetworkTaskSummary> summary() const;
  // The saved models the tasks start from, by template (what resume and --transfer found).
  const std::map<std::string, std::string>& loaded_models() const { return loaded_models_; }
  // Saves each template's model (of its task tuned last that has a trained one) to
  // model_path(model_log, template);
  // returns the files written. tune() calls it at the end.
  std::vector<std::string> save_models() const;

 private:
  struct Slot;
  Slot& slot(size_t task);
  void share_samples(size_t task);
  SliceResult tune_slice(size_t task, size_t trials, Runner& runner,
                         const MeasureCallbacks& callbacks, const std::atomic<bool>& stop,
                         const NetworkProgressFn& progress);
  NetworkProgress progress_of(size_t task, const TuneStatus& status, bool slice_done) const;

  Target target_;
  NetworkTuneOptions options_;
  std::vector<Slot> tasks_;
  size_t workloads_ = 0, resumed_ = 0;
  size_t slice_start_ = 0;  // the network's trials when the current slice began
  std::unique_ptr<TaskScheduler> scheduler_;
  // Correct records by template (log, this run, --transfer): what tasks of it share.
  std::map<std::string, std::vector<TuningRecord>> shared_;
  FeatureCache features_;
  std::map<std::string, std::string> loaded_models_;  // template -> saved model file
  size_t slices_ = 0;                                 // slices handed out so far
};

}  // namespace kiln::tuner
