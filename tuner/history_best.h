// Apply-history-best (AutoTVM's ApplyHistoryBest): from tuning logs, the best config found
// for each (workload, target), across every template of that workload, and the dispatch
// that compilation uses: the tuned template and config when there is one, otherwise the
// operator library's default template with its fallback config, flagged as untuned so the
// caller can warn about what was not tuned.
//
// "Best" is the one comparison rule of measure_result.h: the fastest repeat among
// records whose error kind is ok. Errors, wrong results and timeouts never win; among
// equal costs the record read first stays. The records compared are those settle_records
// keeps: where a tune measured its best few again side by side at the end, those figures
// decide, not the trials' own.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tuner/records.h"

namespace kiln::tuner {

struct BestConfig {
  const schedules::OpTemplate* tpl = nullptr;  // the template the record names
  schedules::Config config;
  TuningRecord record;
  // Where the tune timed the untuned config beside its best (settle_records): how the best
  // compares, e.g. "1.18x faster than the untuned config (p=0.002, 9 vs 9 times)", or "within
  // noise of the untuned config (...)" when the untuned config was kept. Empty otherwise.
  std::string verdict;
};

struct Dispatch {
  const schedules::OpTemplate* tpl = nullptr;
  schedules::Config config;
  bool untuned = true;  // no record: the default template's fallback config
  std::optional<TuningRecord> record;
  std::string verdict;  // BestConfig::verdict
};

class HistoryBest {
 public:
  HistoryBest() = default;
  // Records as load_records returns them (checked against the operator library).
  explicit HistoryBest(const std::vector<TuningRecord>& records);
  // Loads the logs; their bad lines go to `problems` when given (never fatal).
  static HistoryBest from_logs(const std::vector<std::string>& paths,
                               std::vector<RecordProblem>* problems = nullptr);

  std::optional<BestConfig> query(const schedules::Workload& w, const Target& t) const;
  // The template and config to compile `w` for `t` with (see the file comment). UserError
  // when no template of the library implements `w` for `t`.
  Dispatch dispatch(const schedules::Workload& w, const Target& t) const;
  // Number of (workload, target) pairs with a best record.
  size_t size() const { return best_.size(); }

 private:
  void add(const TuningRecord& r);
  std::map<std::string, TuningRecord> best_;  // by workload and target
  std::map<std::string, std::string> verdicts_;  // by task (task_key)
};

// The records that apply-history-best compares. A task (template, workload, target) whose
// best few configs were measured again together at the end of a tune (kRemeasured) is
// judged by those re-measurements only, each config by its latest: the trials' minimum is
// the luckiest of many noisy timings (measured on the AVX2 machine's network logs: a
// re-measured config took a median 4-10% longer than its trial figure at 1 thread and
// 17-20% at 2, the slowest tenth 29-66% longer), so choosing by it deploys luck. Tasks
// never re-measured keep every record. Idempotent: settled records settle to themselves.
// The untuned config must be beaten with confidence: a task whose first trial's config (the
// untuned one a tune measures first, and again beside its best at the end) was re-measured
// keeps it unless the best re-measured config is faster by the rank test at 95% confidence
// (rank_test.h); "faster" by a luckier minimum alone is noise. `verdicts`, when given, gets each
// such task's comparison (BestConfig::verdict) by task_key.
std::vector<TuningRecord> settle_records(const std::vector<TuningRecord>& records,
                                         std::map<std::string, std::string>* verdicts = nullptr);

// The best ok record of each task (template, workload, target) among the settled records,
// in the order the tasks first appear: a log that apply-history-best reads to the same
// answer as the full one.
std::vector<TuningRecord> best_per_task(const std::vector<TuningRecord>& records);

// Pins (`kiln records pin`): the one record per (workload, target) that apply-history-best
// picks from `records`, in the order the workloads first appear. A compile given pins builds
// exactly those configs, whatever later tuning adds to the logs.
std::vector<TuningRecord> pin_records(const std::vector<TuningRecord>& records);
// The records a compile with pins reads: the pins, and the records of every (workload, target)
// no pin covers.
std::vector<TuningRecord> with_pins(const std::vector<TuningRecord>& pins,
                                    const std::vector<TuningRecord>& records);

}  // namespace kiln::tuner
