// Runners: where a batch of measurement inputs runs. The tuner, the kernel tests and
// `kiln inspect --run` hand a runner MeasureInputs and read back RunResults, so measuring on
// this machine and on a board in a farm differ only in the runner chosen:
//  - FarmRunner (tuner/measure/farm_runner.h) submits the batch to a tracker (or a
//    direct-mode worker) for a device key and streams results back as they finish;
//  - LocalRunner (tuner/measure/local_runner.h) runs each input here in a sandboxed child
//    process (kiln-kernel-runner: a crashing or hanging candidate takes only the child down),
//    AArch64 ones under qemu.
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "tuner/measure/measure_input.h"

namespace kiln::tuner {

// Called once per input as its result arrives (results may arrive out of order); `index` is
// the input's position in the batch.
using ResultFn = std::function<void(size_t index, const RunResult& result)>;

class Runner {
 public:
  virtual ~Runner() = default;
  // Runs every input and returns their results in batch order; `on_result` sees each as it
  // arrives. Setting `stop` cancels what has not finished (those come back Cancelled).
  virtual std::vector<RunResult> run(std::vector<MeasureInput> inputs, const ResultFn& on_result,
                                     const std::atomic<bool>& stop) = 0;
  // The measuring device, as records name it: a farm key, or "local".
  virtual std::string device() const = 0;
};

}  // namespace kiln::tuner
