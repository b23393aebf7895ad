// Records that time each kernel of a precision plan as a test says (network/kernel_times.h):
// what a `kiln tune --precisions` log would hold, without tuning.
#pragma once

#include <functional>
#include <vector>

#include "network/kernel_times.h"
#include "tuner/record.h"

namespace kiln::network::test {

// One record per kernel, its config exactly, costing `seconds(workload)`; a kernel for which
// it returns 0 or less gets none.
inline std::vector<tuner::TuningRecord> timed_records(
    const std::vector<KernelToMeasure>& kernels, const Target& target,
    const std::function<double(const schedules::Workload&)>& seconds) {
  std::vector<tuner::TuningRecord> records;
  for (const KernelToMeasure& k : kernels) {
    const double s = seconds(k.workload);
    if (s <= 0) continue;
    tuner::TuningRecord r;
    r.target = target;
    r.template_name = k.tpl->name();
    r.workload = k.workload;
    r.config = k.config;
    r.result.costs = {s};
    records.push_back(r);
  }
  return records;
}

}  // namespace kiln::network::test
