// `kiln demo`: compiles a dense, a conv2d and an elementwise kernel with hand-written
// schedules for each target, runs them (ARM targets under qemu-aarch64), checks them
// against the reference and prints time and GFLOPS. The main job of the README.
//
// Times under qemu measure the emulator, not ARM hardware: they show the kernels run.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <random>

#include "codegen/build.h"
#include "codegen/target.h"
#include "ir/error.h"
#include "kiln/runtime.h"
#include "lower/lower.h"
#include "rpc/kernel_exec.h"
#include "schedules/conv2d.h"
#include "schedules/dense.h"
#include "schedules/elementwise.h"
#include "subcommands.h"

namespace kiln::tools {

namespace {

using Bytes = std::vector<uint8_t>;

struct DemoKernel {
  std::string name, shape;
  double flops = 0;
  ir::LoweredFunc func;
  std::vector<Bytes> args;
  int output = 0;
  std::vector<float> want;
};

std::vector<float> random_values(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1, 1);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

Bytes bytes_of(const std::vector<float>& v) {
  Bytes b(v.size() * 4);
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

// Register tile sizes by vector width: 16 or 12 accumulators of the target's registers.
schedules::RegisterTile tile_for(int lanes) {
  schedules::RegisterTile t;
  t.lanes = lanes;
  t.nr = lanes >= 8 ? 2 * lanes : 4 * lanes;
  t.mr = lanes == 16 ? 8 : 6;
  return t;
}

DemoKernel make_dense(int lanes) {
  schedules::DenseShape shape{256, 256, 256};
  schedules::RegisterTile tile = tile_for(lanes);
  auto op = schedules::dense_packed_compute(shape, tile.nr);
  te::Schedule s({op.c});
  schedules::schedule_dense_register_tile(s, op, tile);
  DemoKernel k{"dense", "256x256x256", shape.flops(), lower::lower(s, {op.a, op.b, op.c}, "dense"),
               {}, 2, {}};
  auto a = random_values(shape.m * shape.k, 1), b = random_values(shape.k * shape.n, 2);
  k.want.resize(shape.m * shape.n);
  schedules::dense_reference(shape, a.data(), b.data(), k.want.data());
  k.args = {bytes_of(a), bytes_of(schedules::pack_dense_b(shape, tile.nr, b.data())),
            Bytes(k.want.size() * 4)};
  return k;
}

DemoKernel make_conv(int lanes) {
  schedules::Conv2dShape shape{1, 32, 28, 28, 32, 3, 3, 1, 1};
  auto op = schedules::conv2d_compute(shape);
  te::Schedule s({op.out});
  s[op.pad].compute_inline();
  te::Tensor acc = s.cache_write(op.out);
  te::Stage c = s[op.out];
  auto [oo, oi] = c.split(c.axis(1), 4);
  auto [xo, xi] = c.split(c.axis(3), lanes);
  c.reorder({c.axis(0), oo, c.axis(2), xo, oi, xi});
  c.vectorize(xi);
  c.parallel(oo);
  te::Stage a = s[acc];
  a.compute_at(c, xo);
  a.reorder({a.axis(0), a.reduce_axis(0), a.reduce_axis(1), a.reduce_axis(2), a.axis(1),
             a.axis(2), a.axis(3)});
  a.unroll(a.axis(1));
  a.unroll(a.reduce_axis(2));
  a.vectorize(a.axis(3));
  DemoKernel k{"conv2d", "1x32x28x28 * 32x32x3x3 pad 1", shape.flops(),
               lower::lower(s, {op.data, op.weight, op.out}, "conv2d"), {}, 2, {}};
  auto d = random_values(shape.n * shape.c * shape.h * shape.w, 3);
  auto w = random_values(shape.o * shape.c * shape.kh * shape.kw, 4);
  k.want.resize(shape.n * shape.o * shape.out_h() * shape.out_w());
  schedules::conv2d_reference(shape, d.data(), w.data(), k.want.data());
  k.args = {bytes_of(d), bytes_of(w), Bytes(k.want.size() * 4)};
  return k;
}

DemoKernel make_elementwise(int lanes) {
  schedules::ElementwiseShape shape{512, 1000};
  auto op = schedules::scale_bias_relu_compute(shape);
  te::Schedule s({op.out});
  s[op.scaled].compute_inline();
  te::Stage o = s[op.out];
  auto [jo, ji] = o.split(o.axis(1), lanes);
  o.vectorize(ji);
  o.parallel(o.axis(0));
  DemoKernel k{"elementwise", "512x1000 relu(a*s+b)", shape.flops(),
               lower::lower(s, {op.a, op.scale, op.bias, op.out}, "elementwise"), {}, 3, {}};
  auto a = random_values(shape.rows * shape.cols, 5), sc = random_values(shape.cols, 6),
       bi = random_values(shape.cols, 7);
  k.want.resize(shape.rows * shape.cols);
  schedules::scale_bias_relu_reference(shape, a.data(), sc.data(), bi.data(), k.want.data());
  k.args = {bytes_of(a), bytes_of(sc), bytes_of(bi), Bytes(k.want.size() * 4)};
  return k;
}

double max_rel_error(const Bytes& got_bytes, const std::vector<float>& want) {
  std::vector<float> got(want.size());
  std::memcpy(got.data(), got_bytes.data(), got.size() * 4);
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    double e = std::fabs(double(got[i]) - want[i]) / std::max(1.0, std::fabs(double(want[i])));
    if (std::isnan(e)) return INFINITY;
    worst = std::max(worst, e);
  }
  return worst;
}

struct Measured {
  Bytes output;
  double median_ms;
};

Measured run_native(const std::string& so, const DemoKernel& k, int threads, int repeat) {
  ThreadPool pool(threads);
  KernelModule module(so, pool);
  Kernel kernel = module.kernel(k.func.name);
  std::vector<AlignedBuffer> bufs;
  std::vector<void*> ptrs;
  for (const Bytes& a : k.args) {
    bufs.emplace_back(a.size());
    std::memcpy(bufs.back().data(), a.data(), a.size());
  }
  for (auto& b : bufs) ptrs.push_back(b.data());
  kernel(ptrs.data());  // warm-up
  std::vector<double> times;
  for (int r = 0; r < repeat; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    kernel(ptrs.data());
    times.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(times.begin(), times.end());
  const auto* out = static_cast<const uint8_t*>(bufs[k.output].data());
  return {Bytes(out, out + k.args[k.output].size()), times[times.size() / 2]};
}

int run_demo(const std::vector<std::string>& targets, std::string runner, int threads, int repeat) {
  if (runner.empty()) runner = KILN_DEFAULT_AARCH64_RUNNER;
  std::printf("%-11s %-12s %-30s %10s %9s %10s  %s\n", "target", "kernel", "shape", "time (ms)",
              "GFLOPS", "max error", "check");
  int failures = 0;
  for (const std::string& name : targets) {
    codegen::Target target = codegen::target_from_name(name);
    bool native = codegen::host_can_run(target);
    if (!native && !target.is_aarch64()) {
      std::printf("%-11s skipped: this CPU lacks its features\n", name.c_str());
      continue;
    }
    if (!native && (runner.empty() || aarch64_qemu_prefix().empty())) {
      std::printf("%-11s skipped: needs qemu-aarch64 and the AArch64 kernel runner\n", name.c_str());
      continue;
    }
    int lanes = target.lanes(ir::DataType::f32());
    for (DemoKernel k : {make_dense(lanes), make_conv(lanes), make_elementwise(lanes)}) {
      std::string so = (std::filesystem::temp_directory_path() /
                        ("kiln-demo-" + std::to_string(getpid()) + "-" + k.name + ".so")).string();
      codegen::build_shared_object({k.func}, target, so);
      Measured m;
      if (native) {
        m = run_native(so, k, threads, repeat);
      } else {
        KernelRun r = run_kernel_out_of_process(runner, true, so, k.func.name, k.args, {k.output},
                                                repeat, threads);
        m = {r.outputs.at(0), r.median_ms};
      }
      std::filesystem::remove(so);
      double err = max_rel_error(m.output, k.want);
      bool ok = err <= 1e-4;
      failures += !ok;
      std::printf("%-11s %-12s %-30s %10.3f %9.2f %10.2e  %s\n", name.c_str(), k.name.c_str(),
                  k.shape.c_str(), m.median_ms, k.flops / (m.median_ms * 1e6), err,
                  ok ? "ok" : "WRONG");
    }
  }
  if (failures) std::printf("%d kernel(s) gave wrong results\n", failures);
  std::printf("(times for ARM targets are qemu emulation times, not ARM hardware)\n");
  return failures ? 1 : 0;
}

}  // namespace

Run add_demo(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "demo", "Compile, run and check a dense, a conv2d and an elementwise kernel per target");
  auto targets = std::make_shared<std::vector<std::string>>(std::vector<std::string>{"host", "arm-neon"});
  auto runner = std::make_shared<std::string>();
  auto threads = std::make_shared<int>(1);
  auto repeat = std::make_shared<int>(10);
  cmd->add_option("--target", *targets, "Target presets (x86-avx2, x86-avx512, arm-neon, arm-fp16, "
                                        "arm-bf16, host)")
      ->capture_default_str();
  cmd->add_option("--runner", *runner, "AArch64 kiln-kernel-runner (default: the one built with kiln)");
  cmd->add_option("--threads", *threads, "Threads for parallel loops")->check(CLI::Range(1, 256));
  cmd->add_option("--repeat", *repeat, "Timed runs per kernel (median reported)")->check(CLI::Range(1, 100000));
  return [=] { return run_demo(*targets, *runner, *threads, *repeat); };
}

}  // namespace kiln::tools
