// Running and checking one kernel on this machine, through the tuner's own measurement path:
// the kernel is compiled, described as a MeasureInput and run by a LocalRunner (a sandboxed
// kiln-kernel-runner child, natively when the host can run the target, else the cross-built
// runner under qemu-aarch64), so a kernel test, `kiln inspect --run`, `kiln demo`, the
// benches and a tuning trial run and time a kernel the same way.
//
// check_built_kernel is the correctness-and-speed check of one template config: the task's
// random logical inputs (tuner/measure/job.h), packed to the kernel's layout, run, unpacked,
// judged against the reference.
#pragma once

#include <string>
#include <vector>

#include "compiler/ir/lowered_func.h"
#include "compiler/target/target.h"
#include "schedules/op_template.h"
#include "tuner/builder.h"
#include "tuner/host_values.h"

namespace kiln::tuner {

struct RunOptions {
  int threads = 1;
  int repeat = 1;  // timed calls after the runner's first (check) call, which warms up
  // kiln-kernel-runner for this machine; empty: the one beside this program, else the one
  // built with kiln.
  std::string runner;
  std::string aarch64_runner;  // kiln-kernel-runner built for AArch64; empty: ARM skipped
  double timeout_s = 300;
};

struct KernelRunResult {
  std::string skip_reason;  // non-empty when this machine cannot run the target
  std::vector<Bytes> outputs;
  double median_ms = 0;
  // The fastest of the repeats: on a loaded machine a call that straddles a scheduler time
  // slice waits for other processes, so the median of calls of a few milliseconds can be 2-3x
  // the time the kernel computes; the least disturbed call is not.
  double best_ms = 0;
};

// Compiles `f` and runs it once plus `repeat` timed calls on `args` (argument i gets args[i]'s
// bytes); returns the final bytes of the buffers in `output_indices`, in that order. Throws
// std::runtime_error with the runner's message when the kernel fails, crashes or times out.
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

// check_built_kernel of a kernel that takes sizes at run time, compiled once and checked at
// each workload of `at` (the kernel's own but for the run-time sizes; builder.h at_sizes).
std::vector<CheckResult> check_at_sizes(const schedules::OpTemplate& tpl, const BuiltKernel& k,
                                        const Target& target,
                                        const std::vector<schedules::Workload>& at,
                                        const RunOptions& options);

}  // namespace kiln::tuner
