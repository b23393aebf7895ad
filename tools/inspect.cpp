// `kiln inspect`: one operator instance through one template and config, shown as lowered
// loop IR, LLVM IR or assembly; with --run, built, run (ARM under qemu), checked against
// the reference and timed.
//
//   kiln inspect --op dense --shape 128,768,768 --epilogue bias,relu --emit asm
//   kiln inspect --op conv2d --shape 1,64,56,56,64,3,3 --pad 1 --run --threads 2 --json
//   kiln inspect --op dense --shape 1024,1024,1024 --target arm-neon --space
//   kiln inspect --op conv2d --shape 1,64,56,56,64,3,3 --pad 1 --target cortex-a72 --analyze
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "compiler/codegen/codegen.h"
#include "compiler/target/target.h"
#include "compiler/base/error.h"
#include "compiler/base/output_paths.h"
#include "compiler/ir/printer.h"
#include "schedules/registry.h"
#include "schedules/validate.h"
#include "tools/subcommands.h"
#include "tools/workload_args.h"
#include "tuner/builder.h"
#include "tuner/history_best.h"
#include "tuner/check_kernel.h"

namespace kiln::tools {

namespace {

struct InspectArgs {
  WorkloadArgs workload;
  std::string target = "host", tmpl, config, emit = "tir", so;
  std::vector<std::string> records;
  bool run = false, json = false, space = false, analyze = false;
  int threads = 1, repeat = 10;
  std::string runner;
  std::vector<std::string> at;  // --at NAME=VALUE: run a run-time size at another value
};

// --space: each applicable template's knobs, their choices and the space size, so a user
// sees what a tuner searches before tuning.
int print_spaces(const schedules::Workload& w, const Target& target, const std::string& tmpl) {
  std::vector<const schedules::OpTemplate*> tpls = schedules::templates_for(w, target);
  if (!tmpl.empty()) tpls = {&pick_template(w, target, tmpl)};
  user_check(!tpls.empty()) << "no template applies to " << w.str() << " on " << target.name;
  for (const schedules::OpTemplate* t : tpls) {
    schedules::ConfigSpace space = t->space(w, target);
    std::printf("%s on %s: %llu configs\n", t->name().c_str(), target.name.c_str(),
                static_cast<unsigned long long>(space.size()));
    for (const schedules::Knob& k : space.knobs()) {
      std::string choices;
      for (int64_t v : k.choices) choices += " " + std::to_string(v);
      // Knobs added after the first logs: the value an older log's config takes.
      std::string legacy =
          k.legacy_default ? "  (older logs: " + std::to_string(*k.legacy_default) + ")" : "";
      std::printf("  %-14s %3zu:%s%s\n", k.name.c_str(), k.choices.size(), choices.c_str(),
                  legacy.c_str());
    }
  }
  return 0;
}

// --analyze: the kernel's innermost loops through llvm-mca with the target CPU's model
// (compiler/codegen/machine_code_analysis.h): predicted cycles, MACs per cycle against the
// core's peak, and what holds each loop back.
int print_analysis(const schedules::Workload& w, const schedules::OpTemplate& tpl,
                   const schedules::Config& cfg, const Target& target, const tuner::BuiltKernel& k,
                   bool json) {
  // Every innermost loop (a kernel has a handful): the micro-kernel first, then its
  // remainders, packing and transforms, whose spills a user wants to see too.
  const codegen::MachineCodeAnalysis a = tuner::analyze_kernel(k.func, target, 16);
  if (json) {
    nlohmann::json loops = nlohmann::json::array();
    for (const codegen::LoopPrediction& p : a.loops)
      loops.push_back({{"function", p.loop.function},
                       {"label", p.loop.label},
                       {"instructions", p.loop.instructions.size()},
                       {"mac", p.loop.mac.name},
                       {"mac_type", p.loop.mac.type},
                       {"macs", p.loop.macs},
                       {"loads", p.loop.loads},
                       {"stores", p.loop.stores},
                       {"spill_loads", p.loop.spill_loads},
                       {"spill_stores", p.loop.spill_stores},
                       {"cycles", p.cycles},
                       {"resource_bound", p.resource_bound},
                       {"macs_per_cycle", p.macs_per_cycle()},
                       {"peak_macs_per_cycle", p.peak_macs_per_cycle},
                       {"of_peak", p.of_peak()},
                       {"bottleneck", p.bottleneck}});
    nlohmann::json j = {{"op", w.op},           {"workload", w.str()},
                        {"template", tpl.name()}, {"config", nlohmann::json::parse(cfg.to_json())},
                        {"target", target.name}, {"model", a.cpu},
                        {"predicted", true},      {"loops", loops}};
    std::printf("%s\n", j.dump().c_str());
    return 0;
  }
  std::printf("%s\ntemplate %s, config %s, target %s\n", w.str().c_str(), tpl.name().c_str(),
              cfg.to_json().c_str(), target.name.c_str());
  std::printf("predicted by llvm-mca with the %s scheduling model (no caches: not a measurement)\n",
              a.cpu.c_str());
  if (a.cpu != codegen::llvm_target(target).cpu)
    std::printf("(LLVM has no model of its own for %s; %s's stands for it)\n",
                codegen::llvm_target(target).cpu.c_str(), a.cpu.c_str());
  for (const codegen::LoopPrediction& p : a.loops) {
    const codegen::AsmLoop& l = p.loop;
    std::printf("\nloop %s in %s: %zu lines per iteration\n", l.label.c_str(), l.function.c_str(),
                l.instructions.size());
    if (l.macs > 0)
      std::printf("  %d x %s = %.0f %s multiply-accumulates, %d loads, %d stores\n",
                  l.mac_instructions, l.mac.name.c_str(), l.macs, l.mac.type.c_str(), l.loads,
                  l.stores);
    else
      std::printf("  no multiply-accumulates, %d loads, %d stores\n", l.loads, l.stores);
    std::printf("  %.2f cycles per iteration (the busiest unit needs %.2f)", p.cycles,
                p.resource_bound);
    if (l.macs > 0) std::printf(": %.2f MACs per cycle", p.macs_per_cycle());
    std::printf("\n");
    if (p.peak_macs_per_cycle > 0)
      std::printf("  %.0f%% of the core's peak for %s (%.2f MACs per cycle)\n", 100 * p.of_peak(),
                  l.mac.name.c_str(), p.peak_macs_per_cycle);
    std::printf("  bottleneck: %s\n", p.bottleneck.c_str());
  }
  return 0;
}

int run_inspect(const InspectArgs& a) {
  // Before the kernel is built: a --so that cannot be written.
  if (!a.so.empty()) check_output_file(a.so, "--so");
  schedules::Workload w = make_workload(a.workload);
  Target target = target_from_name(a.target);
  if (a.space) return print_spaces(w, target, a.tmpl);
  const schedules::OpTemplate* chosen = &pick_template(w, target, a.tmpl);
  // Before any allocation: a shape too big for this machine is a message, not bad_alloc.
  if (a.run) schedules::check_memory_for_run(*chosen, w, schedules::available_memory_bytes());
  // A --config may name only some knobs; the fallback fills in the rest.
  schedules::Config cfg = chosen->fallback(w, target);
  if (!a.records.empty()) {
    // Apply-history-best: the best correct record of this workload and target.
    user_check(a.tmpl.empty() && a.config.empty())
        << "--records chooses the template and config; drop --template and --config";
    std::vector<tuner::RecordProblem> problems;
    tuner::Dispatch d = tuner::HistoryBest::from_logs(a.records, &problems).dispatch(w, target);
    for (const tuner::RecordProblem& p : problems)
      std::fprintf(stderr, "kiln inspect: skipping %s\n", p.str().c_str());
    if (d.untuned)
      std::fprintf(stderr, "kiln inspect: warning: %s on %s is not tuned in the records; using "
                   "the fallback config\n", w.str().c_str(), target.name.c_str());
    chosen = d.tpl;
    cfg = d.config;
  }
  const schedules::OpTemplate& tpl = *chosen;
  if (!a.config.empty()) {
    schedules::Config given = schedules::Config::from_json(a.config);
    for (const auto& [knob, value] : given.values()) cfg.set(knob, value);
  }
  if (!a.so.empty()) {
    // The kernel alone, as a shared object a board program loads with the runtime; its
    // arguments in call order, in the kernel's own layout.
    tuner::BuiltKernel k = tuner::build_template(tpl, w, target, cfg, w.op, a.so);
    std::printf("wrote %s: kernel '%s' for %s (%s, config %s)\n", a.so.c_str(), k.func.name.c_str(),
                target.name.c_str(), tpl.name().c_str(), cfg.to_json().c_str());
    for (size_t i = 0; i < k.args.size(); ++i)
      std::printf("  arg %zu: %-10s %s, %lld elements (%lld bytes)%s\n", i,
                  k.args[i].logical.name.c_str(), k.func.args[i]->dtype.str().c_str(),
                  static_cast<long long>(k.args[i].kernel_elements),
                  static_cast<long long>(k.args[i].kernel_elements * k.func.args[i]->dtype.bytes()),
                  k.args[i].is_output ? ", output" : (k.args[i].pack ? ", packed layout" : ""));
    return 0;
  }

  tuner::BuiltKernel k = tuner::lower_template(tpl, w, target, cfg, w.op);
  user_check(!(a.analyze && a.run)) << "--analyze predicts and --run measures: pick one";
  user_check(a.at.empty() || a.run) << "--at runs the kernel at other sizes: add --run";
  if (a.analyze) return print_analysis(w, tpl, cfg, target, k, a.json);
  if (!a.run) {
    if (a.emit == "tir") {
      std::printf("// %s with %s, config %s, target %s\n%s", w.str().c_str(), tpl.name().c_str(),
                  cfg.to_json().c_str(), target.name.c_str(), ir::to_string(k.func.body).c_str());
      return 0;
    }
    codegen::CodegenOptions o;
    o.emit_llvm_ir = a.emit == "llvm";
    o.emit_assembly = a.emit == "asm";
    codegen::CompiledModule m = codegen::compile_module({k.func}, target, o);
    std::fputs((a.emit == "llvm" ? m.llvm_ir : m.assembly).c_str(), stdout);
    return 0;
  }

  tuner::RunOptions o;
  o.threads = a.threads;
  o.repeat = a.repeat;
  o.aarch64_runner = a.runner.empty() ? KILN_DEFAULT_AARCH64_RUNNER : a.runner;
  user_check(a.runner.empty() || access(a.runner.c_str(), X_OK) == 0)
      << "--runner " << a.runner << ": not an executable file";
  // --at: the kernel built (and configured) for the sizes above, run at other run-time sizes.
  schedules::Workload run_at = w;
  for (const std::string& item : a.at) {
    const size_t eq = item.find('=');
    user_check(eq != std::string::npos && eq > 0) << "--at '" << item << "' is not NAME=VALUE";
    const std::string name = item.substr(0, eq);
    user_check(w.at_run_time(name)) << "--at " << name << ": not a size the kernel takes at run "
                                    << "time (name it in --run-time)";
    char* end = nullptr;
    const long long v = std::strtoll(item.c_str() + eq + 1, &end, 10);
    user_check(end && *end == '\0' && v > 0 && end != item.c_str() + eq + 1)
        << "--at " << name << ": '" << item.substr(eq + 1) << "' is not a positive integer";
    run_at.params[name] = static_cast<int64_t>(v);
  }
  tuner::CheckResult r = w.run_time.empty()
                             ? tuner::check_built_kernel(tpl, w, target, k, o)
                             : tuner::check_at_sizes(tpl, k, target, {run_at}, o).front();
  user_check(r.skip_reason.empty()) << "cannot run on " << target.name << ": " << r.skip_reason;
  if (a.json) {
    nlohmann::json j = {{"op", w.op},
                        {"workload", run_at.str()},
                        {"template", tpl.name()},
                        {"config", nlohmann::json::parse(cfg.to_json())},
                        {"target", target.name},
                        {"threads", a.threads},
                        {"time_ms", r.median_ms},
                        {"gflops", r.gflops},
                        {"correct", r.comparison.close},
                        {"max_error", r.comparison.max_error}};
    std::printf("%s\n", j.dump().c_str());
  } else {
    std::printf("%s\ntemplate %s, config %s, target %s, %d thread(s)\n", run_at.str().c_str(),
                tpl.name().c_str(), cfg.to_json().c_str(), target.name.c_str(), a.threads);
    std::printf("time %.4f ms (median of %d), %.2f GFLOPS, %s\n", r.median_ms, a.repeat, r.gflops,
                r.comparison.message().c_str());
  }
  return r.comparison.close ? 0 : 1;
}

}  // namespace

Run add_inspect(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "inspect", "Show the loop IR, LLVM IR or assembly of one operator, or run and check it");
  auto a = std::make_shared<InspectArgs>();
  add_workload_options(*cmd, a->workload);
  cmd->add_option("--target", a->target, "Target preset")->capture_default_str();
  cmd->add_option("--template", a->tmpl, "Template name (default: the first that applies)");
  cmd->add_option("--config", a->config, "Config as JSON (default: the template's fallback)");
  cmd->add_option("--records", a->records, "Tuning logs: use the best config they hold (apply-history-best)");
  cmd->add_option("--emit", a->emit, "tir, llvm or asm")
      ->check(CLI::IsMember({"tir", "llvm", "asm"}))
      ->capture_default_str();
  cmd->add_option("--so", a->so, "Write the kernel as a shared object to this path (and list its arguments)");
  cmd->add_flag("--space", a->space,
                "List each applicable template's knobs, choices and space size (--template: one)");
  cmd->add_flag("--analyze", a->analyze,
                "Predict the innermost loops' cycles, MACs per cycle against the core's peak and "
                "bottleneck with llvm-mca and the target CPU's model (no board needed)");
  cmd->add_flag("--run", a->run, "Build, run, check against the reference and time it");
  cmd->add_option("--at", a->at,
                  "With --run and --run-time: run at another value of a run-time size, "
                  "NAME=VALUE (repeatable; the config stays the one chosen for --shape)");
  cmd->add_option("--threads", a->threads, "Threads for --run")->check(CLI::Range(1, 256));
  cmd->add_option("--repeat", a->repeat, "Timed runs for --run")->check(CLI::Range(1, 100000));
  cmd->add_flag("--json", a->json, "With --run or --analyze: one JSON object");
  cmd->add_option("--runner", a->runner, "AArch64 kiln-kernel-runner for ARM targets");
  return [a] { return run_inspect(*a); };
}

}  // namespace kiln::tools
