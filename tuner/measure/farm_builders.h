// Builders on the farm: compiling candidates on other machines, so that a tuning host with
// two cores can keep many boards busy. A worker started with `kiln worker --role builder`
// (the full kiln, with LLVM and lld in process) takes build jobs: a candidate as a tuning
// record line and a kernel name in, the linked .so out, for any target (an x86 builder builds
// AArch64 kernels). The tuner still lowers each candidate itself (it needs the kernel's
// arguments to measure it; lowering takes milliseconds), and sends the code generation, where
// a candidate takes tenths of a second to minutes, to the builders.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "rpc/farm/client.h"
#include "tuner/measure/measure_input.h"
#include "tuner/record.h"

namespace kiln::tuner {

// A candidate to build: what it is (target, template, workload, config; the record's result
// is not used) and the symbol its kernel gets.
struct BuildInput {
  TuningRecord candidate;
  std::string entry;
};

struct BuildOutput {
  MeasureErrorKind error = MeasureErrorKind::Ok;  // Ok, InstantiationError, CompileError,
                                                  // CompileTimeout, WorkerLost, Cancelled, ...
  std::string message;
  Bytes so;
};

class FarmBuilders {
 public:
  FarmBuilders(std::string address, std::string token, std::string key, std::string tls_ca = "");
  // Builds every input on the key's builders, each within `timeout_s`; results in input order.
  // Setting `stop` cancels what has not finished.
  std::vector<BuildOutput> build(const std::vector<BuildInput>& inputs, double timeout_s,
                                 const std::atomic<bool>& stop);
  const std::string& key() const { return key_; }
  size_t built() const { return built_; }  // candidates built so far

 private:
  farm::FarmClient client_;
  std::string key_;
  std::atomic<size_t> built_ = 0;
};

// The builder's side: runs one build job (what `kiln worker --role builder` runs instead of
// the measuring sandbox). The compile runs in a child process killed at the job's timeout.
farm::pb::Result run_build_job(const farm::pb::Job& job, const std::atomic<bool>& cancel);

}  // namespace kiln::tuner
