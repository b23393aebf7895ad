// Runners: where a batch of measurement jobs runs. Both speak the farm's job format
// (rpc/farm/farm.proto: the kernel .so, its arguments, number/repeat/min_repeat_ms, a
// timeout) and return the farm's results, so measuring on this machine and on a board in a
// farm differ only in the runner chosen:
//  - FarmRunner submits the batch to a tracker (or a direct-mode worker) for a device key
//    and streams results back as they finish;
//  - LocalRunner runs each job here in a sandboxed child process (kiln-kernel-runner: a
//    crashing or hanging candidate takes only the child down), AArch64 ones under qemu.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "rpc/farm/client.h"
#include "rpc/farm/sandbox.h"

namespace kiln::tuner {

// Called once per job as its result arrives (results may arrive out of order); `index` is the
// job's position in the batch.
using ResultFn = std::function<void(size_t index, const farm::pb::Result& result)>;

class Runner {
 public:
  virtual ~Runner() = default;
  // Runs every job and returns their results in batch order; `on_result` sees each as it
  // arrives. Setting `stop` cancels what has not finished (those come back CANCELLED).
  virtual std::vector<farm::pb::Result> run(std::vector<farm::pb::Job> jobs, const ResultFn& on_result,
                                            const std::atomic<bool>& stop) = 0;
  // The measuring device, as records name it: a farm key, or "local".
  virtual std::string device() const = 0;
};

class FarmRunner : public Runner {
 public:
  // The most job bytes one Submit carries (below the farm's 64 MiB message limit).
  static constexpr size_t kSubmitBytes = 48u << 20;
  FarmRunner(std::string address, std::string token, std::string key, std::string tls_ca = "");
  std::vector<farm::pb::Result> run(std::vector<farm::pb::Job> jobs, const ResultFn& on_result,
                                    const std::atomic<bool>& stop) override;
  std::string device() const override { return key_; }

 private:
  farm::FarmClient client_;
  std::string key_;
};

class LocalRunner : public Runner {
 public:
  // `sandbox.prefix` is the qemu command for AArch64 jobs (empty for native ones).
  explicit LocalRunner(farm::SandboxConfig sandbox) : sandbox_(std::move(sandbox)) {}
  std::vector<farm::pb::Result> run(std::vector<farm::pb::Job> jobs, const ResultFn& on_result,
                                    const std::atomic<bool>& stop) override;
  std::string device() const override { return "local"; }

 private:
  farm::SandboxConfig sandbox_;
};

}  // namespace kiln::tuner
