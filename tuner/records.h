// Tuning logs: files of records (tuner/record.h), one JSON line per measurement, appended
// batch by batch so a tuning run killed at any moment resumes with nothing lost.
//
// Writing: RecordWriter appends a batch, then flushes and fsyncs. Opening a log that a
// killed run left with a torn last line (no final newline) cuts that line off first, so the
// next record starts a clean line; the cut is reported, not hidden. (A last line that is a
// whole record and only lacks its newline is kept and given one.)
//
// Reading: load_records returns the valid records and a list of problems (file, line,
// reason); a bad line is never fatal. Beyond the line's own form (record.h) a record must
// name a template the operator library has, for the workload's op, that applies to the
// workload on the record's target, and a config that is a point of that template's current
// space (every knob present with one of its choices, no knob the space lacks): a log
// written before a template changed its space shows which records went stale.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "tuner/record.h"

namespace kiln::tuner {

struct RecordProblem {
  std::string file;
  size_t line = 0;  // 1-based
  std::string reason;
  std::string str() const;  // "tune.jsonl:12: missing field 'flops'"
};

class RecordWriter {
 public:
  // Opens `path` for appending, creating it when absent (UserError when it cannot).
  explicit RecordWriter(const std::string& path);
  ~RecordWriter();
  RecordWriter(const RecordWriter&) = delete;
  RecordWriter& operator=(const RecordWriter&) = delete;

  // Appends one line per record, then flushes and fsyncs (UserError when writing fails).
  void append(const std::vector<TuningRecord>& batch);
  // The torn last line that opening cut off, if there was one.
  const std::optional<RecordProblem>& repaired_tail() const { return repaired_tail_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int fd_ = -1;
  std::optional<RecordProblem> repaired_tail_;
};

struct LoadOptions {
  // Keep only records for this target (records of others are reported as problems).
  std::optional<Target> target;
  // Check template, applicability and config space against the operator library.
  bool check_templates = true;
};

struct LoadedRecords {
  std::vector<TuningRecord> records;  // valid ones, in file order, files in the given order
  std::vector<RecordProblem> problems;
};

// Reads every file (UserError naming the file when one cannot be opened).
LoadedRecords load_records(const std::vector<std::string>& paths, const LoadOptions& options = {});

// The message of the records that TaskTuner::remeasure_best writes: the same configs
// measured again on purpose, side by side, at the end of a tune (a resumed search never
// proposes a config twice). settle_records (history_best.h) lets them decide.
inline constexpr const char* kRemeasured = "re-measurement of the best";

// Identity of a task: template, workload and target ("dense.packed | dense M=64 ... | x86-avx2
// ...").
std::string task_key(const TuningRecord& r);

// Resume support: the (task, config) pairs a log has measured. Records that were cancelled
// or lost with their worker do not count: they never ran, so a resumed run measures them.
class MeasuredSet {
 public:
  explicit MeasuredSet(const std::vector<TuningRecord>& records);
  bool contains(const std::string& template_name, const schedules::Workload& w, const Target& t,
                const schedules::Config& c) const;
  size_t size() const { return keys_.size(); }

 private:
  std::set<std::string> keys_;
};

}  // namespace kiln::tuner
