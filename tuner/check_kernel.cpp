#include "tuner/check_kernel.h"

#include <algorithm>
#include <atomic>
#include <stdexcept>

#include "kiln/runtime.h"
#include "kiln/timing.h"
#include "rpc/farm/sandbox_config.h"
#include "runtime/process/file_bytes.h"
#include "runtime/process/kernel_exec.h"
#include "runtime/process/temp_dir.h"
#include "tuner/measure/job.h"
#include "tuner/measure/local_runner.h"

#ifndef KILN_BUILT_KERNEL_RUNNER
#define KILN_BUILT_KERNEL_RUNNER ""
#endif

namespace kiln::tuner {
namespace {

Bytes compiled(const ir::LoweredFunc& f, const Target& target) {
  TempDir dir("kiln-kernel");
  const std::string so = dir.file(f.name + ".so");
  compile_kernel(f, target, so);
  return read_file_bytes<Bytes>(so);
}

// The sandbox that runs `target`'s kernels here, or why there is none.
std::string sandbox_for(const Target& target, const RunOptions& o, farm::SandboxConfig* sandbox) {
  sandbox->mem_mb = 0;  // the checks' own inputs decide their size
  if (host_can_run(target)) {
    sandbox->helper =
        o.runner.empty() ? farm::default_sandbox_helper(KILN_BUILT_KERNEL_RUNNER) : o.runner;
    if (sandbox->helper.empty()) return "no kiln-kernel-runner was found for this machine";
    return "";
  }
  if (!target.is_aarch64()) return target.name + " needs CPU features this machine lacks";
  sandbox->prefix = aarch64_qemu_prefix();
  sandbox->helper = o.aarch64_runner;
  if (sandbox->helper.empty() || sandbox->prefix.empty())
    return "running " + target.name + " needs qemu-aarch64 and the AArch64 kernel runner";
  return "";
}

MeasureOptions measure_options(const RunOptions& o) {
  MeasureOptions m;
  m.repeat = static_cast<uint32_t>(std::max(1, o.repeat));
  m.threads = static_cast<uint32_t>(std::max(1, o.threads));
  m.timeout_s = o.timeout_s;
  return m;
}

// Runs one input on a LocalRunner in `sandbox`; throws with the runner's message on failure.
RunResult run_one(const farm::SandboxConfig& sandbox, MeasureInput input) {
  const std::string entry = input.entry;
  std::vector<MeasureInput> batch;
  batch.push_back(std::move(input));
  const std::atomic<bool> never = false;
  RunResult r = LocalRunner(sandbox).run(std::move(batch), nullptr, never).at(0);
  if (!r.ok())
    throw std::runtime_error("kernel '" + entry + "': " + measure_error_name(r.error) + ": " +
                             r.message);
  return r;
}

// The runner's costs as kiln/timing.h summarises every timing.
Timing timing_of(const RunResult& r) {
  Timing t;
  t.seconds = r.costs;
  return t;
}

}  // namespace

KernelRunResult run_lowered(const ir::LoweredFunc& f, const Target& target,
                            const std::vector<Bytes>& args, const std::vector<int>& outs,
                            const RunOptions& o) {
  KernelRunResult out;
  farm::SandboxConfig sandbox;
  out.skip_reason = sandbox_for(target, o, &sandbox);
  if (!out.skip_reason.empty()) return out;
  if (f.args.size() != args.size())
    throw std::runtime_error("kernel " + f.name + " has " + std::to_string(f.args.size()) +
                             " buffers, " + std::to_string(args.size()) + " given");
  MeasureInput in;
  in.so = compiled(f, target);
  in.entry = f.name;
  in.options = measure_options(o);
  for (size_t i = 0; i < args.size(); ++i) {
    KernelArgument a;
    a.dtype = f.args[i]->dtype;
    a.elements = static_cast<int64_t>(args[i].size() / std::max(1, a.dtype.bytes()));
    a.is_output = std::find(outs.begin(), outs.end(), static_cast<int>(i)) != outs.end();
    a.data = args[i];  // outputs too: a kernel may read what it accumulates into
    in.args.push_back(std::move(a));
  }
  RunResult r = run_one(sandbox, std::move(in));
  // The runner returns outputs in argument order; the caller asked in its own order.
  std::vector<int> sorted = outs;
  std::sort(sorted.begin(), sorted.end());
  for (int i : outs) {
    const size_t k = static_cast<size_t>(std::find(sorted.begin(), sorted.end(), i) - sorted.begin());
    out.outputs.push_back(r.outputs.at(k));
  }
  out.median_ms = timing_of(r).median_ms();
  out.best_ms = timing_of(r).best_ms();
  return out;
}

namespace {

// check_built_kernel on a kernel already compiled into `so`.
CheckResult check_compiled(const schedules::OpTemplate& tpl, const schedules::Workload& w,
                           const farm::SandboxConfig& sandbox, const BuiltKernel& k,
                           const Bytes& so, const RunOptions& o) {
  CheckResult c;
  // The tuner's inputs, packing, run and judgement (tuner/measure/job.h), here.
  TaskData data(tpl, w);
  RunResult r = run_one(sandbox, make_input(k, so, data, measure_options(o)));
  // The tolerance follows the inputs' precision: bf16 inputs with an f32 output still
  // carry bf16's rounding in every product; the template may widen it (Winograd).
  c.comparison = compare_output(k, data, r.outputs.at(0), tolerance(w.dtype) * tpl.tolerance_scale(w));
  c.median_ms = timing_of(r).median_ms();
  c.gflops = c.median_ms > 0 ? k.flops / (c.median_ms * 1e6) : 0;
  return c;
}

}  // namespace

CheckResult check_built_kernel(const schedules::OpTemplate& tpl, const schedules::Workload& w,
                               const Target& target, const BuiltKernel& k, const RunOptions& o) {
  farm::SandboxConfig sandbox;
  CheckResult skipped;
  skipped.skip_reason = sandbox_for(target, o, &sandbox);
  if (!skipped.skip_reason.empty()) return skipped;
  return check_compiled(tpl, w, sandbox, k, compiled(k.func, target), o);
}

std::vector<CheckResult> check_at_sizes(const schedules::OpTemplate& tpl, const BuiltKernel& k,
                                        const Target& target,
                                        const std::vector<schedules::Workload>& at,
                                        const RunOptions& o) {
  farm::SandboxConfig sandbox;
  CheckResult skipped;
  skipped.skip_reason = sandbox_for(target, o, &sandbox);
  if (!skipped.skip_reason.empty()) return std::vector<CheckResult>(at.size(), skipped);
  const Bytes so = compiled(k.func, target);
  std::vector<CheckResult> out;
  for (const schedules::Workload& w : at)
    out.push_back(check_compiled(tpl, w, sandbox, at_sizes(k, tpl, w), so, o));
  return out;
}

}  // namespace kiln::tuner
