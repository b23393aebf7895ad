// kiln records: look at and combine tuning logs (JSON lines, tuner/records.h).
//   summary LOG...            per task and CPU: template, workload, target, records, errors
//                             by kind, best GFLOPS and its repeats' spread; then per CPU:
//                             cores, threads, features
//   best LOG... [-o OUT]      the best record of each task, as a log (stdout by default)
//   pin LOG... -o PINS        the record compile picks per workload, for `compile --pins`
//   merge LOG... -o OUT       every valid record once, in the order read
//   plot LOG... -o OUT.svg    best GFLOPS so far against trial number, one line per log
// Bad lines in a log are warnings on stderr, never fatal; a missing log is an error (exit 2).
#include "tuner/records.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <sstream>

#include "compiler/base/error.h"
#include "tools/records_plot.h"
#include "tools/write_file.h"
#include "tools/subcommands.h"
#include "tuner/history_best.h"

namespace kiln::tools {
namespace {

struct RecordsOptions {
  std::vector<std::string> logs;
  std::string out;
  std::string title = "Tuning progress";
};

// Loads the logs and warns about their bad lines (the first few, then a count).
std::vector<tuner::TuningRecord> load_logs(const std::vector<std::string>& logs) {
  tuner::LoadedRecords loaded = tuner::load_records(logs);
  constexpr size_t kShown = 20;
  for (size_t i = 0; i < loaded.problems.size() && i < kShown; ++i)
    std::fprintf(stderr, "kiln: warning: %s (line skipped)\n", loaded.problems[i].str().c_str());
  if (loaded.problems.size() > kShown)
    std::fprintf(stderr, "kiln: warning: ... and %zu more bad lines skipped\n",
                 loaded.problems.size() - kShown);
  return loaded.records;
}

std::string records_text(const std::vector<tuner::TuningRecord>& records) {
  std::string text;
  for (const tuner::TuningRecord& r : records) text += tuner::record_to_json(r) + "\n";
  return text;
}

struct TaskSummary {
  std::string template_name, workload, target, cpu;
  size_t count = 0;
  std::map<tuner::MeasureErrorKind, size_t> errors;
  double best_gflops = 0;
  double best_spread = 0;  // of the best record's repeats (measure_result.h)
  size_t best_repeats = 0;
};

void print_table(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> width;
  for (const auto& row : rows)
    for (size_t c = 0; c < row.size(); ++c) {
      width.resize(std::max(width.size(), row.size()));
      width[c] = std::max(width[c], row[c].size());
    }
  for (const auto& row : rows) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      std::string cell = row[c];
      if (c + 1 < row.size()) cell.resize(width[c] + 2, ' ');
      line += cell;
    }
    std::printf("%s\n", line.c_str());
  }
}

int run_summary(const RecordsOptions& o) {
  std::vector<tuner::TuningRecord> records = load_logs(o.logs);
  std::vector<TaskSummary> tasks;
  std::map<std::string, size_t> index;
  // Grouped by the CPU that measured: a merged log of several machines shows each one's.
  struct CpuSummary {
    tuner::MeasuredOn on;
    std::set<uint32_t> threads;
    std::set<std::string> kiln, tasks;
    size_t records = 0;
  };
  std::map<std::string, CpuSummary> cpus;
  for (const tuner::TuningRecord& r : records) {
    const std::string cpu = r.result.measured_on.cpu();
    CpuSummary& c = cpus[cpu];
    c.on = r.result.measured_on;
    ++c.records;
    c.tasks.insert(tuner::task_key(r));
    if (r.result.measured_on.threads) c.threads.insert(r.result.measured_on.threads);
    if (!r.result.measured_on.kiln.empty()) c.kiln.insert(r.result.measured_on.kiln);
    auto [it, inserted] = index.try_emplace(tuner::task_key(r) + " | " + cpu, tasks.size());
    if (inserted) {
      tasks.emplace_back();
      tasks.back().template_name = r.template_name;
      tasks.back().workload = r.workload.str();
      tasks.back().target = r.target.name;
      tasks.back().cpu = cpu;
    }
    TaskSummary& t = tasks[it->second];
    ++t.count;
    if (r.result.error != tuner::MeasureErrorKind::Ok) ++t.errors[r.result.error];
    if (r.gflops() > t.best_gflops) {
      t.best_gflops = r.gflops();
      t.best_spread = r.result.spread();
      t.best_repeats = r.result.costs.size();
    }
  }
  std::vector<std::vector<std::string>> rows = {
      {"template", "workload", "target", "cpu", "records", "errors", "best GFLOPS", "spread"}};
  for (const TaskSummary& t : tasks) {
    std::string errors;
    for (const auto& [kind, n] : t.errors)
      errors += (errors.empty() ? "" : ", ") + std::string(tuner::measure_error_name(kind)) + " " +
                std::to_string(n);
    char best[32] = "-";
    if (t.best_gflops > 0) std::snprintf(best, sizeof best, "%.2f", t.best_gflops);
    // The best record's repeats: how many, and (max - min) / median.
    char spread[32] = "-";
    if (t.best_gflops > 0)
      std::snprintf(spread, sizeof spread, "%.1f%% of %zu", t.best_spread * 100, t.best_repeats);
    rows.push_back({t.template_name, t.workload, t.target, t.cpu, std::to_string(t.count),
                    errors.empty() ? "-" : errors, best, spread});
  }
  print_table(rows);
  std::set<std::string> distinct;
  for (const tuner::TuningRecord& r : records) distinct.insert(tuner::task_key(r));
  std::printf("%zu tasks, %zu records\n", distinct.size(), records.size());
  std::vector<std::vector<std::string>> by_cpu = {
      {"cpu", "cores", "threads", "features", "kiln", "tasks", "records"}};
  auto joined = [](const auto& items) {
    std::string s;
    for (const auto& i : items) {
      std::ostringstream one;
      one << i;
      s += (s.empty() ? "" : ",") + one.str();
    }
    return s.empty() ? std::string("-") : s;
  };
  for (const auto& [cpu, c] : cpus)
    by_cpu.push_back({cpu, c.on.cores ? std::to_string(c.on.cores) : "-", joined(c.threads),
                      c.on.emulator.empty() && !c.on.features.empty() ? joined(c.on.features) : "-",
                      joined(c.kiln), std::to_string(c.tasks.size()), std::to_string(c.records)});
  std::printf("\nby CPU:\n");
  print_table(by_cpu);
  return 0;
}

int run_best(const RecordsOptions& o) {
  std::string text = records_text(tuner::best_per_task(load_logs(o.logs)));
  if (o.out.empty())
    std::fputs(text.c_str(), stdout);
  else
    write_file_atomically(o.out, text);
  return 0;
}

int run_pin(const RecordsOptions& o) {
  const std::vector<tuner::TuningRecord> pins = tuner::pin_records(load_logs(o.logs));
  user_check(!pins.empty()) << "nothing to pin: no record with a result in the given logs";
  write_file_atomically(o.out, records_text(pins));
  std::fprintf(stderr, "kiln: pinned %zu workloads into %s (kiln compile --pins %s)\n",
               pins.size(), o.out.c_str(), o.out.c_str());
  return 0;
}

int run_merge(const RecordsOptions& o) {
  std::vector<tuner::TuningRecord> records = load_logs(o.logs);
  // The same measurement read twice (a log merged with a copy of itself, or merged again)
  // has the same canonical line; a re-measurement of a config differs in time and costs.
  std::set<std::string> seen;
  std::string text;
  size_t kept = 0;
  for (const tuner::TuningRecord& r : records) {
    std::string line = tuner::record_to_json(r);
    if (!seen.insert(line).second) continue;
    text += line + "\n";
    ++kept;
  }
  write_file_atomically(o.out, text);
  std::fprintf(stderr, "kiln: merged %zu records into %s (%zu duplicates dropped)\n", kept,
               o.out.c_str(), records.size() - kept);
  return 0;
}

int run_plot(const RecordsOptions& o) {
  std::vector<TuningCurve> curves;
  for (const std::string& log : o.logs) {
    std::vector<tuner::TuningRecord> records = load_logs({log});
    std::vector<TuningCurve> tasks = curves_by_task(records);
    std::string name = std::filesystem::path(log).filename().string();
    for (TuningCurve& c : tasks) {
      c.label = tasks.size() == 1 ? name : name + ": " + c.label;
      curves.push_back(std::move(c));
    }
  }
  user_check(!curves.empty()) << "nothing to plot: no valid records in the given logs";
  write_file_atomically(o.out, tuning_curves_svg(curves, o.title));
  return 0;
}

}  // namespace

Run add_records(CLI::App& app) {
  auto o = std::make_shared<RecordsOptions>();
  CLI::App* cmd =
      app.add_subcommand("records", "Summarise, pick the best of, pin, merge or plot tuning logs");
  cmd->require_subcommand(1);
  auto add = [&](const char* name, const char* help) {
    CLI::App* sub = cmd->add_subcommand(name, help);
    sub->add_option("logs", o->logs, "Tuning logs (JSON lines)")->required();
    return sub;
  };
  CLI::App* summary =
      add("summary", "Per task: template, workload, records, errors by kind, best GFLOPS");
  CLI::App* best = add("best", "The best record of each task, as a log apply-history-best reads");
  best->add_option("-o,--out", o->out, "Write to this file instead of stdout");
  CLI::App* pin = add("pin", "The config compile picks for each workload, frozen for compile --pins");
  pin->add_option("-o,--out", o->out, "The pins file (a log of one record per workload)")->required();
  CLI::App* merge = add("merge", "Every valid record of the logs once, into one log");
  merge->add_option("-o,--out", o->out, "The merged log (format version 2: merging one version-1 log rewrites it)")->required();
  CLI::App* plot = add("plot", "Best GFLOPS so far against trial number, as an SVG");
  plot->add_option("-o,--out", o->out, "The SVG file")->required();
  plot->add_option("--title", o->title, "The plot's title");
  return [=]() {
    if (summary->parsed()) return run_summary(*o);
    if (best->parsed()) return run_best(*o);
    if (pin->parsed()) return run_pin(*o);
    if (merge->parsed()) return run_merge(*o);
    return run_plot(*o);
  };
}

}  // namespace kiln::tools
