// The runner that measures on this machine: each input in a fresh sandboxed child
// (kiln-kernel-runner, under qemu-aarch64 for AArch64 kernels), one after another so two
// candidates never share the cores while timed. The child is the farm worker's own sandbox,
// so a kernel judged here and on a board is run, timed and failed the same way.
#pragma once

#include "rpc/farm/sandbox_config.h"
#include "tuner/measure/runner.h"

namespace kiln::tuner {

class LocalRunner : public Runner {
 public:
  // `sandbox.prefix` is the qemu command for AArch64 inputs (empty for native ones).
  explicit LocalRunner(farm::SandboxConfig sandbox) : sandbox_(std::move(sandbox)) {}
  std::vector<RunResult> run(std::vector<MeasureInput> inputs, const ResultFn& on_result,
                             const std::atomic<bool>& stop) override;
  std::string device() const override { return "local"; }

 private:
  farm::SandboxConfig sandbox_;
};

}  // namespace kiln::tuner
