#include "tuner/local_runner.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>

#include "kiln/runtime.h"
#include "runtime/process/kernel_exec.h"
#include "runtime/process/temp_dir.h"

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
  return r;
}

CheckResult check_built_kernel(const schedules::OpTemplate& tpl, const schedules::Workload& w,
                               const Target& target, const BuiltKernel& k,
                               const RunOptions& o) {
  // Each argument travels in its buffer's own element type (an f32 output of a bf16
  // kernel, say), which the lowered function knows.
  if (k.func.args.size() != k.args.size())
    throw std::runtime_error("kernel " + k.func.name + " has " + std::to_string(k.func.args.size()) +
                             " buffers but its template describes " + std::to_string(k.args.size()));
  auto dtype_of = [&](size_t i) { return k.func.args[i]->dtype; };
  std::vector<Values> logical;
  std::vector<Bytes> args;
  uint32_t seed = 11;
  for (size_t i = 0; i < k.args.size(); ++i) {
    const schedules::KernelArg& a = k.args[i];
    if (a.is_output) {
      args.emplace_back(static_cast<size_t>(a.kernel_elements) * dtype_of(i).bytes(), 0);
      continue;
    }
    logical.push_back(random_values(a.logical.elements(), seed++, dtype_of(i)));
    Values packed = a.pack ? a.pack(logical.back()) : logical.back();
    if (static_cast<int64_t>(packed.size()) != a.kernel_elements)
      throw std::runtime_error("argument " + a.logical.name + " packs to " +
                               std::to_string(packed.size()) + " elements, the kernel expects " +
                               std::to_string(a.kernel_elements));
    args.push_back(encode(packed, dtype_of(i)));
  }
  int out_index = static_cast<int>(k.args.size()) - 1;
  KernelRunResult run = run_lowered(k.func, target, args, {out_index}, o);
  CheckResult c;
  c.skip_reason = run.skip_reason;
  if (!c.skip_reason.empty()) return c;
  ir::DataType out_type = dtype_of(k.args.size() - 1);
  Values got = decode(run.outputs[0], out_type);
  if (k.args.back().unpack) got = k.args.back().unpack(got);
  Values want = tpl.reference(w, logical);
  for (float& x : want) x = round_to(x, out_type);
  // The tolerance follows the inputs' precision: bf16 inputs with an f32 output still
  // carry bf16's rounding in every product.
  c.comparison = compare(got, want, tolerance(w.dtype));
  c.median_ms = run.median_ms;
  c.gflops = run.median_ms > 0 ? k.flops / (run.median_ms * 1e6) : 0;
  return c;
}

}  // namespace kiln::tuner
