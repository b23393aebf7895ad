// Building and running kernels on this machine: natively through the runtime when the
// host can run the target, otherwise (AArch64 targets) through the cross-built
// kiln-kernel-runner under qemu-aarch64. The shared object lives in a private temporary
// folder that is always removed.
//
// check_built_kernel is the correctness-and-speed check of one template config that the
// tests, `kiln inspect --run` and the tuner's local measurement share: random logical
// inputs, packed to the kernel's layout, run, unpacked, compared with the reference.
#pragma once

#include <string>
#include <vector>

#include "compiler/target/target.h"
#include "compiler/ir/lowered_func.h"
#include "schedules/op_template.h"
#include "tuner/builder.h"
#include "tuner/host_values.h"

namespace kiln::tuner {

struct RunOptions {
  int threads = 1;
  int warmup = 0;
  int repeat = 1;
  std::string aarch64_runner;  // kiln-kernel-runner built for AArch64; empty: ARM skipped
  double timeout_s = 300;
};

struct KernelRunResult {
  std::string skip_reason;  // non-empty when this machine cannot run the target
  std::vector<Bytes> outputs;
  double median_ms = 0;
  // The fastest of the repeats: on a loaded machine a call that straddles a scheduler time
  // slice waits for other processes, so the median of calls of a few milliseconds can be 2-3x
  // the time the kernel computes; the least disturbed call is not. Out of process (qemu) runs
  // report only their median, copied here.
  double best_ms = 0;
};

KernelRunResult run_lowered(const ir::LoweredFunc& f, const Target& target,
                            const std::vector<Bytes>& args, const std::vector<int>& output_indices,
                            const RunOptions& options);

struct CheckResult {
  std::string skip_reason;
  Comparison comparison;
  double median_ms = 0;
  double gflops = 0;
  bool correct() const { return skip_reason.empty() && comparison.close; }
};

CheckResult check_built_kernel(const schedules::OpTemplate& tpl, const schedules::Workload& w,
                               const Target& target, const BuiltKernel& k,
                               const RunOptions& options);

}  // namespace kiln::tuner
