#include "tuner/cpu_match.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <set>

#include "compiler/base/error.h"
#include "runtime/process/machine.h"

namespace kiln::tuner {
namespace {

std::string lowercase(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// The features a CPU lacks of those the target's code needs ("" when it has them all, or when
// the record does not say: an emulator's or an old record's).
std::string missing_feature(const MeasuredOn& on, const Target& target) {
  if (!on.known() || !on.emulator.empty() || on.features.empty()) return "";
  for (const std::string& f : target.required_cpu_features())
    if (std::find(on.features.begin(), on.features.end(), f) == on.features.end()) return f;
  return "";
}

bool same_features(const MeasuredOn& a, const MeasuredOn& b) {
  if (!a.known() || !b.known() || a.emulator != b.emulator || a.features.empty()) return false;
  return std::set<std::string>(a.features.begin(), a.features.end()) ==
         std::set<std::string>(b.features.begin(), b.features.end());
}

// "AMD EPYC 7B12 (12), unknown CPU (3)": the CPUs and how many workloads each served.
std::string cpu_list(const std::map<std::string, size_t>& counts) {
  std::string s;
  for (const auto& [cpu, n] : counts)
    s += (s.empty() ? "" : ", ") + cpu + " (" + std::to_string(n) + ")";
  return s;
}

struct Deploy {
  MeasuredOn cpu;
  std::string why;  // "this machine", "the CPU with the most records", "--records-cpu"
};

// The deploy CPU `spec` asks for, among the target's records; nothing for "any".
std::optional<Deploy> resolve(const std::string& spec, const std::vector<const TuningRecord*>& own,
                              const Target& target) {
  if (spec == "any") return std::nullopt;
  if (spec == "host" || (spec == "auto" && target.name == "host"))
    return Deploy{this_machine_measured_on(), "this machine"};
  // The CPUs of the target's records, with their record counts, in the order first seen.
  std::vector<std::pair<MeasuredOn, size_t>> cpus;
  const bool any_measured = std::any_of(own.begin(), own.end(), [](const TuningRecord* r) {
    return !r->result.measured_on.predicted();
  });
  for (const TuningRecord* r : own) {
    if (!r->result.measured_on.known()) continue;
    // "auto" deploys on a measured CPU whenever there is one.
    if (spec == "auto" && any_measured && r->result.measured_on.predicted()) continue;
    auto it = std::find_if(cpus.begin(), cpus.end(), [&](const auto& c) {
      return c.first.cpu() == r->result.measured_on.cpu();
    });
    if (it == cpus.end())
      cpus.emplace_back(r->result.measured_on, 1);
    else
      ++it->second;
  }
  if (spec == "auto") {
    if (cpus.empty()) return std::nullopt;
    auto most = std::max_element(cpus.begin(), cpus.end(),
                                 [](const auto& a, const auto& b) { return a.second < b.second; });
    return Deploy{most->first, cpus.size() == 1 ? "the CPU that measured them"
                                                : "the CPU with the most records"};
  }
  std::string names;
  for (const auto& [cpu, n] : cpus) {
    if (lowercase(cpu.cpu()).find(lowercase(spec)) != std::string::npos)
      return Deploy{cpu, "--records-cpu " + spec};
    names += (names.empty() ? "" : ", ") + cpu.cpu();
  }
  throw UserError("--records-cpu '" + spec + "' names no CPU of the " + target.name + " records (" +
                  (names.empty() ? "none names its CPU" : "they name: " + names) +
                  "); give part of one of those names, host, auto or any");
}

}  // namespace

MeasuredOn this_machine_measured_on() {
  const MachineIdentity& m = this_machine();
  MeasuredOn on;
  on.vendor = m.vendor;
  on.model = m.model;
  on.features = m.features;
  on.cores = m.cores;
  on.kiln = kiln_version();
  return on;
}

CpuChoice choose_records_by_cpu(const std::vector<TuningRecord>& records, const Target& target,
                                const std::string& cpu) {
  const std::string key = target_key(target);
  // Workloads with a measured record of the target: their predicted records are left out.
  std::set<std::string> measured;
  for (const TuningRecord& r : records)
    if (target_key(r.target) == key && !r.result.measured_on.predicted())
      measured.insert(r.workload.str());
  size_t predicted_dropped = 0;
  std::set<std::string> predicted_used;
  std::vector<const TuningRecord*> own;
  std::vector<char> is_own(records.size(), 0), is_target(records.size(), 0);
  size_t impossible = 0;
  std::string impossible_example;
  for (size_t i = 0; i < records.size(); ++i) {
    const TuningRecord& r = records[i];
    if (target_key(r.target) != key) continue;
    is_target[i] = 1;
    if (r.result.measured_on.predicted()) {
      if (measured.count(r.workload.str())) {
        ++predicted_dropped;
        continue;
      }
      predicted_used.insert(r.workload.str());
    }
    if (const std::string f = missing_feature(r.result.measured_on, target); !f.empty()) {
      ++impossible;
      if (impossible_example.empty())
        impossible_example = r.result.measured_on.cpu() + " lacks " + f;
      continue;
    }
    is_own[i] = 1;
    own.push_back(&r);
  }
  CpuChoice out;
  if (impossible)
    out.report += "warning: " + std::to_string(impossible) + " records for " + target.name +
                  " ignored: their CPU cannot run its code (" + impossible_example + ")\n";
  if (!predicted_used.empty())
    out.report += "note: " + std::to_string(predicted_used.size()) +
                  " workloads use predicted times (kiln tune --runner analyze: llvm-mca, no "
                  "board): tune them on the board to measure them\n";
  if (predicted_dropped)
    out.report += "note: " + std::to_string(predicted_dropped) +
                  " predicted records left out: their workloads have measured ones\n";
  const std::optional<Deploy> deploy = resolve(cpu, own, target);

  // Per workload, the best tier it has (tier 0: the deploy CPU; 1: same features; 2: any).
  std::map<std::string, int> tier_of;
  if (deploy) {
    for (const TuningRecord* r : own) {
      const MeasuredOn& on = r->result.measured_on;
      const int tier = on.known() && on.cpu() == deploy->cpu.cpu() ? 0
                       : same_features(on, deploy->cpu)            ? 1
                                                                   : 2;
      auto [it, inserted] = tier_of.try_emplace(r->workload.str(), tier);
      if (!inserted) it->second = std::min(it->second, tier);
    }
  }
  std::set<std::string> counted;
  size_t on_deploy = 0;
  size_t unnamed = 0;  // workloads served by records that name no CPU
  std::map<std::string, size_t> same_features_cpus, other_cpus;
  for (size_t i = 0; i < records.size(); ++i) {
    const TuningRecord& r = records[i];
    if (!is_target[i]) {
      out.records.push_back(r);
      continue;
    }
    if (!is_own[i]) continue;
    if (!deploy) {
      out.records.push_back(r);
      continue;
    }
    const MeasuredOn& on = r.result.measured_on;
    const std::string w = r.workload.str();
    const int tier = tier_of.at(w);
    const bool in_tier = tier == 0   ? on.known() && on.cpu() == deploy->cpu.cpu()
                         : tier == 1 ? same_features(on, deploy->cpu)
                                     : true;
    if (!in_tier) continue;
    out.records.push_back(r);
    if (!counted.insert(w + "\n" + on.cpu()).second) continue;
    if (tier == 0) ++on_deploy;
    if (tier == 1) ++same_features_cpus[on.cpu()];
    if (tier == 2) ++(on.known() ? other_cpus[on.cpu()] : unnamed);
  }
  if (!deploy) return out;
  if (on_deploy && !deploy->cpu.predicted())  // the note above says it for predicted ones
    out.report += "records of " + deploy->cpu.cpu() + " (" + deploy->why + ") for " +
                  std::to_string(on_deploy) + " workloads\n";
  if (!same_features_cpus.empty())
    out.report += "warning: workloads without records of " + deploy->cpu.cpu() +
                  " use those of a CPU with the same features: " + cpu_list(same_features_cpus) +
                  "\n";
  if (!other_cpus.empty())
    out.report += "warning: workloads without records of " + deploy->cpu.cpu() +
                  " or of its features use those of another CPU: " + cpu_list(other_cpus) +
                  " (tune on the deploy CPU for its own best)\n";
  if (unnamed)
    out.report += "note: " + std::to_string(unnamed) +
                  " workloads use records that name no CPU (written before kiln 0.45, or by "
                  "hand)\n";
  return out;
}

}  // namespace kiln::tuner
