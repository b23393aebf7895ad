// Which records serve a compile, by the CPU that measured them. A team's merged log holds
// configs tuned on several machines for one target, and the fastest config on one CPU need
// not be the fastest on another. So each workload takes, in this order:
//   1. the records of the deploy CPU (same vendor and model), when it has any;
//   2. else those of another CPU whose probe reads the same feature set;
//   3. else any record of the target (another CPU, an emulator, or one that names none),
// and the compile says which workloads fell back and to which CPUs. A record whose measuring
// CPU lacks a feature the target's code needs is never used: it cannot have run that code
// (a log edited by hand, or a record copied between targets). Predicted records (`kiln tune
// --runner analyze`) serve only workloads without a measured record of the target, and the
// compile says how many did.
//
// The deploy CPU (`--records-cpu`): "host" is this machine; "auto", the default, is this
// machine for `--target host` and otherwise the CPU that measured the most records of the
// target; "any" prefers none (every record competes, as before records named their CPU);
// anything else names a CPU of the logs by part of its name ("EPYC 7B12", "Cortex-A72").
#pragma once

#include <string>
#include <vector>

#include "tuner/record.h"

namespace kiln::tuner {

struct CpuChoice {
  std::vector<TuningRecord> records;  // what apply-history-best reads, in the logs' order
  std::string report;                 // lines ending in '\n' ("warning: ..." for fallbacks)
};

// Records of other targets pass through untouched (apply-history-best ignores them). Throws
// UserError when `cpu` names no CPU of the target's records.
CpuChoice choose_records_by_cpu(const std::vector<TuningRecord>& records, const Target& target,
                                const std::string& cpu = "auto");

// This machine as records name it (runtime/process/machine.h), `threads` unset.
MeasuredOn this_machine_measured_on();

}  // namespace kiln::tuner
