#include "tuner/measure/local_runner.h"

#include "rpc/farm/sandbox.h"
#include "tuner/measure/farm_wire.h"

namespace kiln::tuner {

std::vector<RunResult> LocalRunner::run(std::vector<MeasureInput> inputs,
                                        const ResultFn& on_result, const std::atomic<bool>& stop) {
  std::vector<RunResult> results(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (stop) {
      results[i].error = MeasureErrorKind::Cancelled;
      results[i].message = "stopped before it ran";
    } else {
      results[i] = from_farm_result(farm::run_in_sandbox(to_farm_job(inputs[i]), sandbox_, stop));
    }
    if (on_result) on_result(i, results[i]);
  }
  return results;
}

}  // namespace kiln::tuner
