#include "tuner/history_best.h"

#include <set>

#include "schedules/registry.h"
#include "tuner/rank_test.h"

namespace kiln::tuner {
namespace {

std::string workload_target_key(const schedules::Workload& w, const Target& t) {
  return w.str() + " | " + target_key(t);
}

bool better(const TuningRecord& candidate, const TuningRecord& incumbent) {
  return candidate.result.cost() < incumbent.result.cost();
}

}  // namespace

std::vector<TuningRecord> settle_records(const std::vector<TuningRecord>& records,
                                         std::map<std::string, std::string>* verdicts) {
  // Per task with re-measurements: each re-measured config's latest ok re-measurement.
  std::map<std::string, std::map<std::string, size_t>> latest;  // task -> config -> record
  std::map<std::string, std::string> first_config;              // task -> its first trial's
  for (size_t i = 0; i < records.size(); ++i) {
    const TuningRecord& r = records[i];
    if (r.result.ok() && r.result.message == kRemeasured)
      latest[task_key(r)][r.config.to_json()] = i;
    else if (r.result.message != kRemeasured)
      first_config.try_emplace(task_key(r), r.config.to_json());
  }
  // Per such task, the best re-measured config against the untuned one timed beside it.
  std::map<std::string, size_t> keep_only;  // task -> the untuned record, when within noise
  for (const auto& [task, configs] : latest) {
    auto first = first_config.find(task);
    if (first == first_config.end()) continue;
    auto untuned = configs.find(first->second);
    if (untuned == configs.end()) continue;
    size_t best = untuned->second;
    for (const auto& [config, i] : configs)
      if (better(records[i], records[best])) best = i;
    if (best == untuned->second) continue;
    const SpeedComparison c =
        compare_speed(records[best].result.costs, records[untuned->second].result.costs);
    if (verdicts) (*verdicts)[task] = c.str("the untuned config");
    if (!c.significant()) keep_only[task] = untuned->second;
  }
  std::vector<TuningRecord> settled;
  for (size_t i = 0; i < records.size(); ++i) {
    const std::string task = task_key(records[i]);
    if (auto it = latest.find(task); it != latest.end()) {
      auto config = it->second.find(records[i].config.to_json());
      if (config == it->second.end() || config->second != i) continue;
    }
    if (auto kept = keep_only.find(task); kept != keep_only.end() && kept->second != i) continue;
    settled.push_back(records[i]);
  }
  return settled;
}

HistoryBest::HistoryBest(const std::vector<TuningRecord>& records) {
  for (const TuningRecord& r : settle_records(records, &verdicts_)) add(r);
}

HistoryBest HistoryBest::from_logs(const std::vector<std::string>& paths,
                                   std::vector<RecordProblem>* problems) {
  LoadedRecords loaded = load_records(paths);
  if (problems) problems->insert(problems->end(), loaded.problems.begin(), loaded.problems.end());
  return HistoryBest(loaded.records);
}

void HistoryBest::add(const TuningRecord& r) {
  if (!r.result.ok()) return;
  auto [it, inserted] = best_.try_emplace(workload_target_key(r.workload, r.target), r);
  if (!inserted && better(r, it->second)) it->second = r;
}

std::optional<BestConfig> HistoryBest::query(const schedules::Workload& w, const Target& t) const {
  auto it = best_.find(workload_target_key(w, t));
  if (it == best_.end()) return std::nullopt;
  const TuningRecord& r = it->second;
  auto verdict = verdicts_.find(task_key(r));
  return BestConfig{&schedules::template_named(r.template_name), r.config, r,
                    verdict == verdicts_.end() ? "" : verdict->second};
}

Dispatch HistoryBest::dispatch(const schedules::Workload& w, const Target& t) const {
  if (std::optional<BestConfig> best = query(w, t))
    return Dispatch{best->tpl, best->config, false, best->record, best->verdict};
  const schedules::OpTemplate* tpl = schedules::templates_for(w, t).front();
  return Dispatch{tpl, tpl->fallback(w, t), true, std::nullopt};
}

std::vector<TuningRecord> best_per_task(const std::vector<TuningRecord>& records) {
  std::vector<TuningRecord> best;
  std::map<std::string, size_t> index;  // task -> position in `best`
  for (const TuningRecord& r : settle_records(records)) {
    if (!r.result.ok()) continue;
    auto [it, inserted] = index.try_emplace(task_key(r), best.size());
    if (inserted)
      best.push_back(r);
    else if (better(r, best[it->second]))
      best[it->second] = r;
  }
  return best;
}

std::vector<TuningRecord> pin_records(const std::vector<TuningRecord>& records) {
  const HistoryBest best(records);
  std::vector<TuningRecord> pins;
  std::set<std::string> seen;
  for (const TuningRecord& r : records)
    if (seen.insert(workload_target_key(r.workload, r.target)).second)
      if (std::optional<BestConfig> b = best.query(r.workload, r.target)) pins.push_back(b->record);
  return pins;
}

std::vector<TuningRecord> with_pins(const std::vector<TuningRecord>& pins,
                                    const std::vector<TuningRecord>& records) {
  std::set<std::string> pinned;
  for (const TuningRecord& p : pins) pinned.insert(workload_target_key(p.workload, p.target));
  std::vector<TuningRecord> out = pins;
  for (const TuningRecord& r : records)
    if (!pinned.count(workload_target_key(r.workload, r.target))) out.push_back(r);
  return out;
}

}  // namespace kiln::tuner
