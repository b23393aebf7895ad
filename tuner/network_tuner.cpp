#include "tuner/network_tuner.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>

namespace kiln::tuner {
namespace {

// Records that stand for a trial: what a resumed run never measures again (a cancelled job or
// one lost with its worker never ran; a re-measurement is not a new config, nor is a config
// measured again because it failed the first time).
bool counts_as_trial(const TuningRecord& r) {
  return r.result.error != MeasureErrorKind::Cancelled &&
         r.result.error != MeasureErrorKind::WorkerLost && r.result.message != kRemeasured;
}

double flops_of(const schedules::OpTemplate& tpl, const schedules::Workload& w, const Target& t) {
  try {
    return tpl.instantiate(w, t, tpl.fallback(w, t)).flops;
  } catch (const std::exception&) {
    return 0;  // only the scheduler's group estimate uses it
  }
}

// Whether `config` has every knob of `pin` at the pinned value (a record of that task).
bool matches_pin(const schedules::Config& config, const schedules::Config& pin) {
  for (const auto& [knob, value] : pin.values())
    if (!config.has(knob) || config[knob] != value) return false;
  return true;
}

bool faster(const TuningRecord& a, const std::optional<TuningRecord>& b) {
  return a.result.ok() && (!b || a.result.cost() < b->result.cost());
}

bool saves_models(const NetworkTuneOptions& o) {
  return !o.model_log.empty() && o.task.search == "xgb" && o.task.features == "ir";
}

}  // namespace

std::string model_path(const std::string& log, const std::string& template_name) {
  return log + "." + template_name + ".xgb";
}

struct NetworkTuner::Slot {
  TuneTask task;
  int occurrences = 0;
  double flops = 0;
  std::vector<TuningRecord> history;  // the log's records of this task
  size_t resumed = 0;                 // of which trials
  std::optional<TuningRecord> resumed_best;
  std::unique_ptr<TaskTuner> tuner;   // created at the task's first slice
  size_t shared_seen = SIZE_MAX;      // shared records of its template when last handed over
  size_t last_slice = 0;              // when it was last tuned (NetworkTuner::slices_), 0: never

  const std::optional<TuningRecord>& best() const { return tuner ? tuner->best() : resumed_best; }
  size_t trials() const { return resumed + (tuner ? tuner->status().trials : 0); }
};

NetworkTuner::NetworkTuner(const std::vector<NetworkWorkload>& workloads, const Target& target,
                           NetworkTuneOptions options, const std::vector<TuningRecord>& log)
    : target_(target), options_(std::move(options)) {
  std::set<std::string> distinct;  // a workload may come once per channel-block pin
  for (const NetworkWorkload& w : workloads) distinct.insert(w.workload.str());
  workloads_ = distinct.size();
  for (const NetworkWorkload& w : workloads)
    for (const schedules::OpTemplate* tpl : w.templates) {
      Slot s;
      s.task = TuneTask{tpl, w.workload, target, w.pinned, {}};
      if (tpl == w.untuned_template) s.task.first = {w.untuned_config};
      s.occurrences = w.occurrences;
      s.flops = flops_of(*tpl, w.workload, target);
      tasks_.push_back(std::move(s));
    }
  // The heaviest workloads first: a budget too small to warm every task up tunes those.
  std::stable_sort(tasks_.begin(), tasks_.end(), [](const Slot& a, const Slot& b) {
    return a.occurrences * a.flops > b.occurrences * b.flops;
  });
  std::map<std::string, std::vector<size_t>> by_task;  // template and workload -> slots
  std::vector<std::set<std::string>> measured(tasks_.size());  // configs, per slot
  for (size_t i = 0; i < tasks_.size(); ++i)
    by_task[tasks_[i].task.tpl->name() + " | " + tasks_[i].task.workload.str()].push_back(i);
  for (const TuningRecord& r : log) {
    if (r.result.ok()) shared_[r.template_name].push_back(r);
    auto it = by_task.find(r.template_name + " | " + r.workload.str());
    if (it == by_task.end()) continue;
    // The slot whose channel-block pin the record's config has (records of other blocks, from
    // a run with other pins, are only shared samples).
    auto slot_it = std::find_if(it->second.begin(), it->second.end(), [&](size_t i) {
      return matches_pin(r.config, tasks_[i].task.pinned);
    });
    if (slot_it == it->second.end()) continue;
    const size_t i = *slot_it;
    Slot& s = tasks_[i];
    s.history.push_back(r);
    if (counts_as_trial(r) && measured[i].insert(r.config.to_json()).second) ++s.resumed;
    if (faster(r, s.resumed_best)) s.resumed_best = r;
  }
  if (!options_.transfer.empty())
    for (const TuningRecord& r : load_records(options_.transfer).records)
      if (r.result.ok()) shared_[r.template_name].push_back(r);

  // Saved cost models: this log's own (resume), else a --transfer log's.
  if (saves_models(options_))
    for (const Slot& s : tasks_) {
      const std::string& tpl = s.task.tpl->name();
      std::vector<std::string> logs = {options_.model_log};
      logs.insert(logs.end(), options_.transfer.begin(), options_.transfer.end());
      for (const std::string& l : logs)
        if (!loaded_models_.count(tpl) && std::filesystem::exists(model_path(l, tpl)))
          loaded_models_[tpl] = model_path(l, tpl);
    }

  std::vector<ScheduledTask> scheduled;
  for (const Slot& s : tasks_) {
    ScheduledTask t;
    t.weight = s.occurrences;
    t.flops = s.flops;
    t.group = s.task.tpl->name();
    t.alternatives = s.task.workload.str();
    t.trials = s.resumed;
    t.best_cost_s = s.resumed_best ? s.resumed_best->result.cost() : 0;
    resumed_ += s.resumed;
    scheduled.push_back(std::move(t));
  }
  SchedulerOptions so;
  so.trials = options_.trials;
  so.time_budget_s = options_.time_budget_s;
  so.slice = std::max<size_t>(1, options_.task.batch);
  so.warmup = std::min(options_.warmup, so.slice);
  scheduler_ = std::make_unique<TaskScheduler>(std::move(scheduled), so);
}

NetworkTuner::~NetworkTuner() = default;

size_t NetworkTuner::tasks() const {
  return tasks_.size();
}

NetworkTuner::Slot& NetworkTuner::slot(size_t task) {
  Slot& s = tasks_[task];
  if (!s.tuner) {
    TuneOptions o = options_.task;
    if (auto it = loaded_models_.find(s.task.tpl->name()); it != loaded_models_.end())
      o.initial_model = it->second;
    s.tuner = std::make_unique<TaskTuner>(s.task, o, s.history);
  }
  return s;
}

void NetworkTuner::share_samples(size_t task) {
  Slot& s = tasks_[task];
  if (options_.task.search != "xgb") return;  // only the model-based search learns from them
  const std::vector<TuningRecord>& group = shared_[s.task.tpl->name()];
  if (group.size() == s.shared_seen) return;
  s.shared_seen = group.size();
  // Every other task's records of this template (its own it learns from directly).
  std::vector<TuningRecord> others;
  for (const TuningRecord& r : group)
    if (r.workload.str() != s.task.workload.str() || target_key(r.target) != target_key(target_) ||
        !matches_pin(r.config, s.task.pinned))
      others.push_back(r);
  if (others.empty()) return;
  s.tuner->set_prior(transfer_samples(others, *s.task.tpl, options_.task.features, 64, &features_));
}

double NetworkTuner::estimated_latency_s(size_t* measured_workloads) const {
  std::map<std::string, std::pair<int, double>> best;  // workload -> (calls, best time)
  for (const Slot& s : tasks_) {
    auto [it, inserted] = best.try_emplace(s.task.workload.str(), s.occurrences, INFINITY);
    if (s.best()) it->second.second = std::min(it->second.second, s.best()->result.cost());
  }
  double sum = 0;
  size_t measured = 0;
  for (const auto& [w, calls_time] : best)
    if (std::isfinite(calls_time.second)) {
      sum += calls_time.first * calls_time.second;
      ++measured;
    }
  if (measured_workloads) *measured_workloads = measured;
  return sum;
}

NetworkProgress NetworkTuner::progress_of(size_t task, const TuneStatus& status,
                                          bool slice_done) const {
  NetworkProgress p;
  p.task = task;
  p.tasks = tasks_.size();
  p.current = &tasks_[task].task;
  p.status = status;
  p.slice_done = slice_done;
  p.latency_s = estimated_latency_s(&p.measured_workloads);
  p.workloads = workloads_;
  p.trials = slice_start_ + status.trials;
  p.budget = options_.trials;
  return p;
}

SliceResult NetworkTuner::tune_slice(size_t task, size_t trials, Runner& runner,
                                     const MeasureCallbacks& callbacks,
                                     const std::atomic<bool>& stop,
                                     const NetworkProgressFn& progress) {
  Slot& s = slot(task);
  share_samples(task);
  s.last_slice = ++slices_;
  const size_t before = s.tuner->status().trials;
  slice_start_ = scheduler_->total_trials() - before;
  MeasureCallbacks slice_callbacks = callbacks;
  slice_callbacks.push_back(report_progress([&](const TuneStatus& status) {
    if (progress) progress(progress_of(task, status, false));
  }));
  s.tuner->tune(trials, runner, slice_callbacks, stop);
  if (progress) progress(progress_of(task, s.tuner->status(), true));
  const auto& best = s.tuner->best();
  return {s.tuner->status().trials - before, best ? best->result.cost() : 0, s.tuner->finished()};
}

void NetworkTuner::tune(Runner& runner, RecordWriter& log, const std::atomic<bool>& stop,
                        const NetworkProgressFn& progress) {
  // Each batch goes to the log, then every correct record of it joins its template's shared
  // samples (the other tasks of that template learn from it).
  const MeasureCallbacks callbacks = {
      append_to(log), [this](const TaskTuner&, const std::vector<TuningRecord>& batch) {
        for (const TuningRecord& r : batch)
          if (r.result.ok()) shared_[r.template_name].push_back(r);
      }};
  scheduler_->run(
      [&](size_t task, size_t trials) {
        return tune_slice(task, trials, runner, callbacks, stop, progress);
      },
      stop);
  for (Slot& s : tasks_)
    if (s.tuner && s.tuner->status().trials > 0 && !stop)
      s.tuner->remeasure_best(runner, callbacks, stop);
  save_models();  // also when stopped: a resumed run starts from them
}

std::vector<std::string> NetworkTuner::save_models() const {
  std::vector<std::string> written;
  if (!saves_models(options_)) return written;
  // Per template, the trained model of its task tuned most recently.
  std::map<std::string, const Slot*> latest;
  for (const Slot& s : tasks_) {
    const cost_model::CostModel* m = s.tuner ? s.tuner->model() : nullptr;
    if (!m || !m->trained()) continue;
    const Slot*& l = latest[s.task.tpl->name()];
    if (!l || s.last_slice > l->last_slice) l = &s;
  }
  for (const auto& [tpl, s] : latest) {
    s->tuner->model()->save(model_path(options_.model_log, tpl));  // a temporary renamed: atomic
    written.push_back(model_path(options_.model_log, tpl));
  }
  return written;
}

std::vector<NetworkTaskSummary> NetworkTuner::summary() const {
  std::vector<NetworkTaskSummary> out;
  for (const Slot& s : tasks_) out.push_back({s.task, s.occurrences, s.trials(), s.best()});
  return out;
}

}  // namespace kiln::tuner
