#include "network/kernel_times.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "tuner/history_best.h"

namespace kiln::network {
namespace {

std::string kernel_key(const std::string& tpl, const schedules::Workload& w,
                       const schedules::Config& c) {
  return tpl + " " + w.str() + " " + c.to_json();
}

}  // namespace

RecordTimes::RecordTimes(const std::vector<tuner::TuningRecord>& records, const Target& target) {
  const std::string mine = tuner::target_key(target);
  for (const tuner::TuningRecord& r : tuner::settle_records(records)) {
    if (!r.result.ok() || tuner::target_key(r.target) != mine) continue;
    double& best = best_[kernel_key(r.template_name, r.workload, r.config)];
    best = best > 0 ? std::min(best, r.result.cost()) : r.result.cost();
  }
}

double RecordTimes::of(const Task& t) const {
  auto it = best_.find(kernel_key(t.tpl->name(), t.workload, t.config));
  return it == best_.end() ? 0 : it->second;
}

ProgramTimes::ProgramTimes(const NetworkProgram& p, const RecordTimes& times,
                           std::vector<KernelToMeasure>& unmeasured, std::set<std::string>& listed)
    : program_(p), times_(times), unmeasured_(unmeasured), listed_(listed) {
  for (const Step& s : p.steps) steps_[s.node].push_back(s.task);
}

double ProgramTimes::node_s(const std::string& node, std::vector<KernelToMeasure>& kernels) const {
  auto it = steps_.find(node);
  if (it == steps_.end()) return 0;
  double sum = 0;
  bool all = true;
  for (int task : it->second) {
    const Task& t = program_.tasks.at(task);
    kernels.push_back({t.tpl, t.workload, t.config});
    if (const double s = times_.of(t); s > 0) {
      sum += s;
      continue;
    }
    all = false;
    if (listed_.insert(kernel_key(t.tpl->name(), t.workload, t.config)).second)
      unmeasured_.push_back({t.tpl, t.workload, t.config});
  }
  return all ? sum : -1;
}

std::string format_ms(double s) {
  if (s <= 0) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", s * 1e3);
  return buf;
}

std::string format_two_forms(const std::string& title, const std::string& low,
                             const std::string& f32, const std::vector<TwoForms>& rows) {
  std::ostringstream s;
  s << title << " (ms per call):\n";
  char line[400];
  std::snprintf(line, sizeof line, "  %-10s %-10s %-8s %s\n", low.c_str(), f32.c_str(), "takes",
                "layer");
  s << line;
  for (const TwoForms& r : rows) {
    std::snprintf(line, sizeof line, "  %-10s %-10s %-8s %s\n", format_ms(r.low_s).c_str(),
                  format_ms(r.f32_s).c_str(), r.takes.c_str(), r.layer.c_str());
    s << line;
  }
  return s.str();
}

std::string describe_two_forms(const std::string& what, const std::string& low,
                               const std::string& f32, const std::vector<TwoForms>& rows,
                               double margin, size_t unmeasured, const std::string& low_flag) {
  if (rows.empty()) return "";
  int in_low = 0, in_f32 = 0, rule = 0;
  for (const TwoForms& r : rows) (r.takes == "rule" ? rule : r.takes == low ? in_low : in_f32)++;
  std::ostringstream s;
  s << what << ": " << in_low << " " << low << ", " << in_f32 << " " << f32
    << " (measured faster by over " << int(margin * 100) << "%)";
  if (rule > 0)
    s << ", " << rule << " by the rule (" << unmeasured
      << " of their kernels not in the records: kiln tune --precisions f32," << low_flag
      << " measures them)";
  return s.str();
}

}  // namespace kiln::network
