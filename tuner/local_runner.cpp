#include "tuner/local_runner.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>

#include "kiln/runtime.h"
#include "runtime/process/kernel_exec.h"
#include "runtime/process/temp_dir.h"
#include "tuner/measure/job.h"

namespace kiln::tuner {

namespace {


KernelRunResult run_native(const std::string& so, const std::string& fn,
                           const std::vector<Bytes>& args, const std::vector<int>& outs,
                           const RunOptions& o) {
  ThreadPool pool(o.threads);
  KernelModule module(so, pool);
  Kernel kernel = module.kernel(fn);
  std::vector<AlignedBuffer> bufs;
  std::vector<void*> ptrs;
  for (const Bytes& a : args) {
    bufs.emplace_back(a.size());
    std::memcpy(bufs.back().data(), a.data(), a.size());
  }
  for (AlignedBuffer& b : bufs) ptrs.push_back(b.data());
  for (int i = 0; i < o.warmup; ++i) kernel(ptrs.data());
  std::vector<double> times;
  for (int r = 0; r < std::max(1, o.repeat); ++r) {
    auto t0 = std::chrono::steady_clock::now();
    kernel(ptrs.data());
    times.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(times.begin(), times.end());
  KernelRunResult r;
  r.median_ms = times[times.size() / 2];
  r.best_ms = times.front();
  for (int i : outs) {
    const auto* p = static_cast<const uint8_t*>(bufs.at(i).data());
    r.outputs.emplace_back(p, p + bufs[i].size());
  }
  return r;
}

}  // namespace

KernelRunResult run_lowered(const ir::LoweredFunc& f, const Target& target,
                            const std::vector<Bytes>& args, const std::vector<int>& outs,
                            const RunOptions& o) {
  KernelRunResult r;
  bool native = host_can_run(target);
  if (!native && !target.is_aarch64()) {
    r.skip_reason = target.name + " needs CPU features this machine lacks";
    return r;
  }
  if (!native && (o.aarch64_runner.empty() || aarch64_qemu_prefix().empty())) {
    r.skip_reason = "running " + target.name + " needs qemu-aarch64 and the AArch64 kernel runner";
    return r;
  }
  TempDir dir("kiln-kernel");
  std::string so = dir.file(f.name + ".so");
  compile_kernel(f, target, so);
  if (native) return run_native(so, f.name, args, outs, o);
  KernelRun run = run_kernel_out_of_process(o.aarch64_runner, true, so, f.name, args, outs,
                                            std::max(1, o.repeat), o.threads, o.timeout_s);
  r.outputs = std::move(run.outputs);
  r.median_ms = run.median_ms;
  r.best_ms = run.median_ms;
  return r;
}

CheckResult check_built_kernel(const schedules::OpTemplate& tpl, const schedules::Workload& w,
                               const Target& target, const BuiltKernel& k, const RunOptions& o) {
  // The tuner's inputs, packing and judgement (tuner/measure/job.h), run here.
  TaskData data(tpl, w);
  std::vector<Bytes> args = kernel_arguments(k, data);
  int out_index = static_cast<int>(k.args.size()) - 1;
  KernelRunResult run = run_lowered(k.func, target, args, {out_index}, o);
  CheckResult c;
  c.skip_reason = run.skip_reason;
  if (!c.skip_reason.empty()) return c;
  // The tolerance follows the inputs' precision: bf16 inputs with an f32 output still
  // carry bf16's rounding in every product; the template may widen it (Winograd).
  c.comparison = compare_output(k, data, run.outputs[0], tolerance(w.dtype) * tpl.tolerance_scale(w));
  c.median_ms = run.median_ms;
  c.gflops = run.median_ms > 0 ? k.flops / (run.median_ms * 1e6) : 0;
  return c;
}

}  // namespace kiln::tuner
