// The records' times of the very kernels a lowered network calls, by graph node: what the
// measured precision choices (int8_paths.h, half_paths.h) add up to compare two ways of
// running a layer, and the kernels no record times yet, for `kiln tune` to measure once.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "compiler/target/target.h"
#include "network/network_program.h"
#include "schedules/op_template.h"
#include "tuner/record.h"

namespace kiln::network {

// A kernel call, by its exact (template, workload, config).
struct KernelToMeasure {
  const schedules::OpTemplate* tpl = nullptr;
  schedules::Workload workload;
  schedules::Config config;
};

// The records' time of each exact kernel: the best ok one (the comparison rule of
// measure_result.h) among those apply-history-best weighs (settle_records).
class RecordTimes {
 public:
  RecordTimes(const std::vector<tuner::TuningRecord>& records, const Target& target);
  double of(const Task& t) const;  // 0 when no record times it

 private:
  std::map<std::string, double> best_;
};

// The kernel calls of one program by graph node (node_key), timed by the records. Kernels
// without a time go to `unmeasured`, each once however many programs or nodes call it.
class ProgramTimes {
 public:
  ProgramTimes(const NetworkProgram& p, const RecordTimes& times,
               std::vector<KernelToMeasure>& unmeasured, std::set<std::string>& listed);
  // The node's calls summed, its kernels appended to `kernels`; -1 when one of them has no
  // time. A node without calls (folded away, or fused into another) costs 0.
  double node_s(const std::string& node, std::vector<KernelToMeasure>& kernels) const;
  bool calls(const std::string& node) const { return steps_.count(node) > 0; }

 private:
  const NetworkProgram& program_;
  const RecordTimes& times_;
  std::vector<KernelToMeasure>& unmeasured_;
  std::set<std::string>& listed_;
  std::map<std::string, std::vector<int>> steps_;
};

// Seconds as milliseconds with three decimals ("0.412"); "-" for 0.
std::string format_ms(double s);

// What int8_paths.h and half_paths.h report of a layer with two forms: the lower precision
// ("int8", "bf16") against f32 or the float path.
struct TwoForms {
  std::string layer;
  double low_s = 0, f32_s = 0;  // 0: not in the records
  std::string takes;            // the form's name, or "rule" when not both timed
};

// `kiln tune`'s table: a row per layer, both times in ms and the form taken.
std::string format_two_forms(const std::string& title, const std::string& low,
                             const std::string& f32, const std::vector<TwoForms>& rows);
// `kiln compile`'s line: "<what>: 9 <low>, 5 <f32> (measured faster by over 5%), 2 by the
// rule (3 of their kernels not in the records: kiln tune --precisions f32,<low> measures them)".
std::string describe_two_forms(const std::string& what, const std::string& low,
                               const std::string& f32, const std::vector<TwoForms>& rows,
                               double margin, size_t unmeasured, const std::string& low_flag);

}  // namespace kiln::network
