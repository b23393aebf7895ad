// `kiln tune`: tunes one operator (or, given an .onnx file, every task of a network:
// tune_network.cpp) on a device farm and appends every measurement to a log.
//
//   kiln tune --op dense --shape 1024,1024,1024 --target x86-avx512 --trials 200 --log d.jsonl
//   kiln tune --op conv2d --shape 1,64,56,56,64,3,3 --pad 1 --tuner ga --farm 10.0.0.5:9190
//             --key rk3588 --token-file farm.token --trials 1000 --log c.jsonl
//
// Without --farm an embedded farm runs on loopback (a tracker and workers for the target:
// native processes, or AArch64 workers under qemu). Ctrl-C stops after the batch in flight
// is cancelled, with the log intact; running the same command again resumes from the log.
#include <cstdio>

#include "compiler/base/error.h"
#include "schedules/registry.h"
#include "schedules/validate.h"
#include "tools/farm_args.h"
#include "tools/precision_args.h"
#include "tools/shape_args.h"
#include "tools/subcommands.h"
#include "tools/tune_args.h"
#include "tuner/history_best.h"
#include "tuner/measure/farm_builders.h"
#include "tuner/predict.h"
#include "tuner/records.h"
#include "tuner/task_tuner.h"
#include "tuner/transfer.h"

namespace kiln::tools {
namespace {

int run_tune(const TuneArgs& a) {
  user_check((!a.old_space && !a.skip_untuned) || a.model.empty())
      << (a.old_space ? "--old-space" : "--skip-untuned")
      << " applies to one operator (--op), not to a network";
  if (!a.model.empty()) return run_network_tune(a);
  user_check(!a.workload.op.empty())
      << "kiln tune needs an ONNX model (kiln tune MODEL.onnx ...) or an operator (--op)";
  user_check(a.workload.dtype != "auto" && a.precisions.empty())
      << "--dtype auto and --precisions apply to a network (kiln tune MODEL.onnx ...), not to --op";
  user_check(a.time_budget.empty() && a.input_shapes.empty() && a.ranges.empty() &&
             a.layout_choices == 1 && a.batch_classes == "auto")
      << (!a.time_budget.empty()    ? "--time-budget"
          : !a.input_shapes.empty() ? "--input-shape"
          : !a.ranges.empty()       ? "--range"
          : a.layout_choices != 1   ? "--layout-choices"
                                    : "--batch-classes")
      << " applies to a network (kiln tune MODEL.onnx ...), not to --op";
  schedules::Workload w = make_workload(a.workload);
  Target target = target_from_name(a.target);
  const schedules::OpTemplate& tpl = pick_template(w, target, a.tmpl);
  schedules::check_memory_for_run(tpl, w, schedules::available_memory_bytes());
  user_check(!a.log.empty()) << "--log is required: every measurement is appended to it";
  user_check(a.trials > 0) << "--trials must be positive";
  user_check(a.farm.empty() || !a.key.empty())
      << "--farm needs --key (the device key of the boards to use)";

  // Opened first: a file that is not a log is refused before anything reads or writes it.
  std::unique_ptr<tuner::RecordWriter> log_file = open_log(a.log);
  // Resume: this task's records in the log are never measured again.
  std::vector<tuner::TuningRecord> mine;
  for (const tuner::TuningRecord& r : load_log(a.log, target))
    if (r.template_name == tpl.name() && r.workload.str() == w.str()) mine.push_back(r);
  tuner::RecordWriter& log = *log_file;

  tuner::TuneOptions o = task_options(a);
  if (!a.transfer.empty()) o.prior = tuner::transfer_samples(a.transfer, tpl, a.features);
  tuner::TuneTask task{&tpl, w, target, {}, {}};
  if (a.old_space) task.pinned = tpl.space(w, target).legacy_defaults();
  // The untuned kernel is measured first (and again with the best few at the end), so that
  // apply-history-best weighs every tuned record against what compiling without a log builds.
  if (!a.skip_untuned) task.first = {tpl.fallback(w, target)};
  // The runner: the farm given, or one embedded for this run; and the builders, if any.
  std::unique_ptr<tuner::EmbeddedFarm> embedded;
  std::unique_ptr<tuner::Runner> runner = make_runner(a, target, embedded);
  o.builders = make_builders(a, embedded.get());
  tuner::TaskTuner tuner(task, o, mine);
  if (!a.quiet)
    std::fprintf(stderr, "kiln tune: %s, %s search over %llu configs, %zu trials%s on %s\n",
                 task.str().c_str(), a.tuner.c_str(),
                 static_cast<unsigned long long>(tuner.space_size()), a.trials,
                 mine.empty() ? "" : (" (" + std::to_string(tuner::MeasuredSet(mine).size()) + " in the log)").c_str(),
                 a.runner == "analyze" ? "no device: times predicted by llvm-mca"
                 : embedded            ? embedded->description().c_str()
                                       : a.farm.c_str());

  // --trials is the log's total for this task, as in a network tune: the same command run
  // again after a stop goes on to the same total instead of adding a budget each time.
  const size_t done = tuner::MeasuredSet(mine).size();
  const size_t more = a.trials > done ? a.trials - done : 0;
  if (more == 0 && !a.quiet)
    std::fprintf(stderr, "kiln tune: %s already holds %zu trials of this task (--trials %zu counts "
                 "the log's); nothing more to measure\n", a.log.c_str(), done, a.trials);
  install_interrupt_handler();
  // Ctrl-C cancels the batch in flight: whatever the farm's calls then throw is the stop,
  // not an error of the run (the log holds every finished measurement).
  try {
    if (more > 0)
      tuner.tune(more, *runner,
                 {tuner::append_to(log), tuner::report_progress([&](const tuner::TuneStatus& s) {
                    if (!a.quiet) print_progress(1, 1, s, "");
                  })},
                 g_stop);
    if (!a.quiet) end_progress_line();
    if (!g_stop && more > 0) tuner.remeasure_best(*runner, {tuner::append_to(log)}, g_stop);
  } catch (const std::exception&) {
    if (!g_stop) throw;
    if (!a.quiet) end_progress_line();
  }
  if (const cost_model::CostModel* m = tuner.model(); m && m->trained())
    m->save(a.log + ".xgb");

  const auto& best = tuner.best();
  if (g_stop) std::fprintf(stderr, "kiln tune: stopped; %s holds every measurement so far\n", a.log.c_str());
  if (!best) {
    std::fprintf(stderr, "kiln tune: no config of %s ran correctly\n", task.str().c_str());
    return 1;
  }
  if (o.builders && !a.quiet)
    std::fprintf(stderr, "kiln tune: %zu candidates built on the builders of key '%s'\n",
                 o.builders->built(), o.builders->key().c_str());
  if (o.predict)
    std::printf("best: %.1f GFLOPS predicted (%.4f ms at %.1f GHz, llvm-mca; not measured) "
                "config %s\n",
                best->gflops(), best->result.cost() * 1e3, tuner::prediction_ghz(target),
                best->config.to_json().c_str());
  else
    std::printf("best: %.1f GFLOPS (%.4f ms, spread %.0f%%) config %s\n", best->gflops(),
                best->result.cost() * 1e3, best->result.spread() * 100,
                best->config.to_json().c_str());
  // What compile will build from the log: the best only when it beat the untuned config
  // beyond noise where both were timed side by side (history_best.h).
  const tuner::HistoryBest history(load_log(a.log, target));
  if (std::optional<tuner::BestConfig> b = history.query(w, target); b && !b->verdict.empty())
    std::printf("best against the untuned config: %s%s\n", b->verdict.c_str(),
                b->verdict.rfind("within noise", 0) == 0 ? "; kiln compile keeps the untuned config"
                                                          : "");
  return g_stop ? 130 : 0;
}

}  // namespace

Run add_tune(CLI::App& app) {
  auto* cmd = app.add_subcommand("tune", "Tune an operator's schedule on a device farm");
  auto a = std::make_shared<TuneArgs>();
  cmd->add_option("model", a->model, "An ONNX network to tune every task of (else --op)");
  add_workload_options(*cmd, a->workload);
  cmd->get_option("--op")->required(false);
  cmd->get_option("--dtype")->description(
      "f32, f16 or bf16; a network: auto (--precisions f32,int8 for a quantized model, else "
      "f32 and the half type the target has)");
  cmd->add_option("--input-shape", a->input_shapes, std::string("Network: ") + kInputShapeHelp);
  cmd->add_option("--range", a->ranges,
                  "Network: SYMBOL=MIN..MAX, a ranged batch: tunes the kernels kiln compile "
                  "--range builds, one sample's and its batch classes'");
  cmd->add_option("--batch-classes", a->batch_classes,
                  "With --range: the batch classes compile will build (as kiln compile takes it: "
                  "auto, none, or sizes such as 4,16)")
      ->capture_default_str();
  cmd->add_option("--precisions", a->precisions,
                  "Network: measure each layer in two precisions, for compile --records to run "
                  "each in the faster: f32,int8 (a quantized model's convs: int8 kernel or "
                  "float path) or f32,bf16 / f32,f16 (conv/dense layers; compile with --dtype "
                  "bf16|f16)");
  cmd->add_option("--time-budget", a->time_budget, "Network: stop after this long (90s, 30m, 1.5h)");
  cmd->add_option("--layout-choices", a->layout_choices,
                  "Network: channel blocks tuned per conv (1: its untuned blocks only); compile "
                  "--records then picks the blocks jointly")
      ->check(CLI::Range(1, 4))
      ->capture_default_str();
  cmd->add_option("--target", a->target, "Target preset")->capture_default_str();
  cmd->add_option("--template", a->tmpl, "Template name (default: the first that applies)");
  cmd->add_option("--trials", a->trials, "Trials the log holds at the end, its earlier ones of these tasks included (a rerun resumes to this total)")->check(CLI::Range(1, 100000000))->capture_default_str();
  cmd->add_option("--tuner", a->tuner, "Search: xgb, ga, random or grid")
      ->check(CLI::IsMember({"xgb", "ga", "random", "grid"}))
      ->capture_default_str();
  cmd->add_option("--features", a->features, "Cost model features: ir or knob")
      ->check(CLI::IsMember({"ir", "knob"}))
      ->capture_default_str();
  cmd->add_option("--seed", a->seed, "Random seed of the search")->check(CLI::Range(int64_t{0}, INT64_MAX))->capture_default_str();
  cmd->add_option("--log", a->log, "Records file (JSON lines), appended and resumed from")->required();
  cmd->add_option("--transfer", a->transfer, "Earlier logs to pre-train the cost model on");
  cmd->add_option("--batch", a->batch, "Candidates per batch")->check(CLI::Range(1, 4096))->capture_default_str();
  cmd->add_option("--early-stopping", a->early_stopping, "Stop after N trials without improvement (0: never)")->check(CLI::Range(int64_t{0}, INT64_MAX));
  cmd->add_option("--remeasure-rounds", a->remeasure_rounds,
                  "Rounds of the end-of-tune re-measurement of the best few and the untuned "
                  "config (more rounds: smaller gains shown beyond noise)")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  cmd->add_option("--threads", a->threads, "Threads of each kernel")->check(CLI::Range(1, 256))->capture_default_str();
  cmd->add_option("--repeat", a->repeat, "Timed repeats per 1-thread candidate (multi-thread ones get more)")->check(CLI::Range(1, 1000))->capture_default_str();
  cmd->add_option("--min-repeat-ms", a->min_repeat_ms, "Each repeat lasts at least this long")->check(CLI::Range(0.0, 10000.0))->capture_default_str();
  cmd->add_option("--timeout", a->timeout_s, "Seconds a candidate may run")->check(CLI::Range(0.1, 3600.0))->capture_default_str();
  cmd->add_option("--build-timeout", a->build_timeout_s, "Seconds a candidate may take to build (then killed)")->check(CLI::Range(0.001, 3600.0))->capture_default_str();
  cmd->add_option("--farm", a->farm, "Tracker (or direct-mode worker) HOST:PORT; default: an embedded farm");
  cmd->add_option("--runner", a->runner,
                  "farm (measure: --farm, or an embedded one), or analyze: predict each "
                  "candidate's time with llvm-mca and the target CPU's model, for a board that is "
                  "not connected (records say 'predicted'; compile prefers measured ones)")
      ->check(CLI::IsMember({"farm", "analyze"}))
      ->capture_default_str();
  cmd->add_option("--key", a->key, "Device key of the farm's boards");
  cmd->add_option("--token-file", a->token_file, "Farm token file (or KILN_FARM_TOKEN)");
  cmd->add_option("--tls-ca", a->tls_ca, "PEM root certificate of a TLS tracker");
  cmd->add_option("--overlap-builds", a->overlap_builds,
                  "Build the next batch while one is measured: auto (with --farm; not with the "
                  "embedded farm, whose workers share the compiler's cores), on, off")
      ->check(CLI::IsMember({"auto", "on", "off"}))
      ->capture_default_str();
  cmd->add_option("--workers", a->workers, "Embedded farm: workers (default: one per --threads cores)")->check(CLI::Range(0, 256));
  cmd->add_option("--builders", a->builders,
                  "Embedded farm: also start N builders (kiln worker --role builder) that compile "
                  "the candidates")
      ->check(CLI::Range(0, 64));
  cmd->add_option("--build-key", a->build_key,
                  "With --farm: compile candidates on that key's builders (kiln worker --role "
                  "builder --key KEY on any machine: an x86 builder builds AArch64 kernels)");
  cmd->add_flag("--quiet", a->quiet, "No progress output");
  cmd->add_flag("--skip-untuned", a->skip_untuned,
                "Do not measure the untuned (fallback) config first: the search alone, as in "
                "a comparison of tuners");
  cmd->add_flag("--old-space", a->old_space,
                "Pin the knobs added to the template since its first logs to their old values");
  add_keep_last_flag(*cmd, a->keep_last_f32);
  return [a] { return run_tune(*a); };
}

}  // namespace kiln::tools
