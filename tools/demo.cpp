// `kiln demo`: compiles a dense, a conv2d and an elementwise kernel for each target with
// the operator library's default template and its fallback config (what a user who does
// not tune gets), runs them (ARM targets under qemu-aarch64), checks them against the
// reference and prints time and GFLOPS. The main job of the README.
//
// Times under qemu measure the emulator, not ARM hardware: they show the kernels run.
#include <cstdio>

#include "compiler/target/target.h"
#include "runtime/process/kernel_exec.h"
#include "schedules/registry.h"
#include "tools/subcommands.h"
#include "tuner/builder.h"
#include "tuner/check_kernel.h"

namespace kiln::tools {

namespace {

struct DemoKernel {
  std::string name, shape;
  schedules::Workload workload;
};

std::vector<DemoKernel> demo_kernels() {
  using ir::DataType;
  return {
      {"dense", "256x256x256", {"dense", {{"M", 256}, {"N", 256}, {"K", 256}}, DataType::f32(), {}}},
      {"conv2d", "1x32x28x28 * 32x32x3x3 pad 1",
       {"conv2d",
        {{"N", 1}, {"C", 32}, {"H", 28}, {"W", 28}, {"O", 32}, {"KH", 3}, {"KW", 3}, {"stride", 1},
         {"pad", 1}},
        DataType::f32(),
        {"bias", "relu"}}},
      // relu(a * scale + bias): a trailing-dimension broadcast chain fused into one kernel
      {"elementwise", "512x1000 relu(a*s+b)",
       {"mul",
        {{"rank", 2}, {"a0", 512}, {"a1", 1000}, {"b0", 1}, {"b1", 1000}, {"c0", 1}, {"c1", 1000}},
        DataType::f32(),
        {"add", "relu"}}},
  };
}

int run_demo(const std::vector<std::string>& targets, std::string runner, int threads, int repeat) {
  if (runner.empty()) runner = KILN_DEFAULT_AARCH64_RUNNER;
  std::printf("%-11s %-12s %-30s %-18s %10s %9s %10s  %s\n", "target", "kernel", "shape",
              "template", "time (ms)", "GFLOPS", "max error", "check");
  int failures = 0;
  for (const std::string& name : targets) {
    Target target = target_from_name(name);
    tuner::RunOptions options;
    options.threads = threads;
    options.repeat = repeat;
    options.aarch64_runner = runner;
    for (const DemoKernel& d : demo_kernels()) {
      const schedules::OpTemplate& tpl = *schedules::templates_for(d.workload, target).front();
      tuner::BuiltKernel k =
          tuner::lower_template(tpl, d.workload, target, tpl.fallback(d.workload, target), d.name);
      tuner::CheckResult r = tuner::check_built_kernel(tpl, d.workload, target, k, options);
      if (!r.skip_reason.empty()) {
        std::printf("%-11s skipped: %s\n", name.c_str(), r.skip_reason.c_str());
        break;
      }
      failures += !r.comparison.close;
      std::printf("%-11s %-12s %-30s %-18s %10.3f %9.2f %10.2e  %s\n", name.c_str(), d.name.c_str(),
                  d.shape.c_str(), tpl.name().c_str(), r.median_ms, r.gflops,
                  r.comparison.max_error, r.comparison.close ? "ok" : "WRONG");
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
