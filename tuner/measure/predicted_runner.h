// The runner of `kiln tune --runner analyze`: nothing is run. The task tuner predicts each
// candidate's time in its builder (TuneOptions::predict, tuner/predict.h) and never hands this
// runner a batch; it stands where a runner must, names the device the records show
// ("llvm-mca"), and refuses a batch it is handed all the same.
#pragma once

#include "tuner/measure/runner.h"

namespace kiln::tuner {

class PredictedRunner : public Runner {
 public:
  std::vector<RunResult> run(std::vector<MeasureInput> inputs, const ResultFn& on_result,
                             const std::atomic<bool>&) override {
    std::vector<RunResult> out(inputs.size());
    for (size_t i = 0; i < out.size(); ++i) {
      out[i].error = MeasureErrorKind::InvalidJob;
      out[i].message = "--runner analyze predicts times and runs no kernel";
      if (on_result) on_result(i, out[i]);
    }
    return out;
  }
  std::string device() const override { return "llvm-mca"; }
};

}  // namespace kiln::tuner
