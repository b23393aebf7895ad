// `kiln tune MODEL.onnx --target T --trials N --log LOG [--input-shape ...] [--time-budget 30m]
// [--transfer OLD.jsonl...] [--farm ... --key ... --token-file ...]`: extracts the network's
// tasks exactly as `kiln compile` would (network/extract_tasks.h) and tunes them all
// under one trial budget, the task scheduler choosing where each batch goes
// (tuner/network_tuner.h). Progress per task as AutoTVM prints it, with a running estimate of
// the network's latency. The budget counts the log's trials of these tasks, so after Ctrl-C or
// a kill the same command goes on where it stopped, measuring nothing twice.
// `--layout-choices N` tunes each conv with up to N channel-block pins (block_choices.h) and
// then measures the layout conversions between them, for compile's joint layout choice.
// `--precisions int8,f32` or `f32,bf16` (or `--dtype auto`) tunes both forms of each layer, so
// that compile --records runs each in the faster (tune_precisions.h).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <set>
#include <string>

#include "compiler/base/error.h"
#include "compiler/graph/bind.h"
#include "network/block_choices.h"
#include "network/extract_tasks.h"
#include "network/layout_plan.h"
#include "network/prepare_graph.h"
#include "network/ranged_batch.h"
#include "schedules/registry.h"
#include "tools/precision_args.h"
#include "tools/tune_args.h"
#include "tools/tune_precisions.h"
#include "tuner/network_tuner.h"
#include "tuner/records.h"

namespace kiln::tools {
namespace {

// "90", "90s", "30m", "1.5h" -> seconds.
double parse_duration(const std::string& text) {
  size_t used = 0;
  double value = -1;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
  }
  const std::string unit = text.substr(std::min(used, text.size()));
  const double scale = unit.empty() || unit == "s" ? 1 : unit == "m" ? 60 : unit == "h" ? 3600 : -1;
  user_check(used > 0 && scale > 0 && value > 0 && std::isfinite(value))
      << "--time-budget '" << text << "' is not a positive duration (valid: 90, 90s, 30m, 1.5h)";
  return value * scale;
}

std::string latency_text(const tuner::NetworkTuner& t) {
  size_t measured = 0;
  const double s = t.estimated_latency_s(&measured);
  char buf[160];
  std::snprintf(buf, sizeof buf, "%.4f ms (%zu of %zu workloads measured)", s * 1e3, measured,
                t.workloads());
  return buf;
}

void print_summary(const tuner::NetworkTuner& t, bool predicted) {
  std::printf("%-6s %-22s %-8s %-12s %-9s %s\n", "calls", "template", "trials", "best (ms)",
              "GFLOPS", "workload");
  for (const tuner::NetworkTaskSummary& s : t.summary()) {
    std::printf("%-6d %-22s %-8zu ", s.occurrences, s.task.tpl->name().c_str(), s.trials);
    if (s.best)
      std::printf("%-12.4f %-9.1f ", s.best->result.cost() * 1e3, s.best->gflops());
    else
      std::printf("%-12s %-9s ", "-", "-");
    std::printf("%s\n", s.task.workload.str().c_str());
  }
  std::printf("estimated network latency: %s%s\n", latency_text(t).c_str(),
              predicted ? " (kernel times predicted by llvm-mca, not measured)" : "");
}

// The layout conversions the joint layout choice would weigh but the log has no time for
// (layout_plan.h), each measured once in its fallback config, so `kiln compile --records`
// costs them as measured rather than estimated.
void measure_conversions(const TuneArgs& a, const Target& target,
                         const graph::ShapeBindings& shapes,
                         const network::PrecisionOptions& precision, tuner::Runner& runner,
                         tuner::RecordWriter& log) {
  const network::LayoutPlan plan =
      network::plan_layouts(network::prepare_graph(a.model, shapes, target, precision).graph,
                            target, load_log(a.log, target));
  if (!a.quiet)
    std::fprintf(stderr, "kiln tune: %s; measuring %zu layout conversions\n",
                 network::describe(plan).c_str(), plan.unmeasured_conversions.size());
  tuner::TuneOptions o = task_options(a);
  o.batch = 1;
  o.remeasure_top = 0;
  o.search = "grid";
  for (const schedules::Workload& w : plan.unmeasured_conversions) {
    if (g_stop) return;
    const schedules::OpTemplate* tpl = schedules::templates_for(w, target).front();
    tuner::TuneTask task{tpl, w, target, tpl->fallback(w, target), {}};
    tuner::TaskTuner(task, o).tune(1, runner, {tuner::append_to(log)}, g_stop);
  }
}

}  // namespace

int run_network_tune(const TuneArgs& a) {
  user_check(a.workload.op.empty()) << "give either an ONNX model or --op, not both";
  user_check(std::filesystem::path(a.model).extension() == ".onnx")
      << "'" << a.model << "' is not an .onnx file (kiln tune MODEL.onnx, or --op for one operator)";
  user_check(a.tmpl.empty()) << "--template applies to --op; a network tunes every template of each task";
  user_check(a.trials > 0) << "--trials must be positive";
  user_check(a.farm.empty() || !a.key.empty())
      << "--farm needs --key (the device key of the boards to use)";
  const Target target = target_from_name(a.target);
  tuner::NetworkTuneOptions o;
  o.task = task_options(a);
  o.task.remeasure_top = 3;  // per task: a network has many
  o.trials = a.trials;
  o.time_budget_s = a.time_budget.empty() ? 0 : parse_duration(a.time_budget);
  o.transfer = a.transfer;
  o.model_log = a.log;
  graph::ShapeBindings shapes;
  for (const std::string& spec : a.input_shapes) graph::add_shape_binding(shapes, spec);
  user_check(a.ranges.size() <= 1)
      << "one --range per model today (a ranged batch); got " << a.ranges.size();
  user_check(a.batch_classes == "auto" || !a.ranges.empty())
      << "--batch-classes goes with --range (a ranged batch)";

  // The tasks exactly as `kiln compile` builds them, each conv once per channel-block pin.
  std::vector<tuner::NetworkWorkload> workloads;
  // --dtype: the half workloads `kiln compile --dtype` will build.
  // --dtype, and --precisions: the kernels of both forms of each layer (tune_precisions.h),
  // at each size compile builds (one, or a ranged batch's one sample and classes).
  std::vector<graph::ShapeBindings> sizes = {shapes};
  std::optional<graph::DimRange> range;
  if (!a.ranges.empty()) {
    range = graph::parse_dim_range(a.ranges[0]);
    user_check(shapes.count(range->symbol) == 0)
        << "--range " << range->symbol << " and --input-shape " << range->symbol
        << " both give it a size: keep one";
    sizes[0][range->symbol] = {1};
  }
  const network::PrecisionOptions precision = network_precision(a, target, sizes[0]);
  std::vector<network::ExtractedTask> tasks;
  if (!range) {
    tasks = network::extract_tasks(a.model, target, shapes, precision);
  } else {
    // A ranged batch: one sample's kernels and its batch classes' (network/ranged_batch.h).
    std::vector<int64_t> classes;
    tasks = network::extract_ranged_batch_tasks(a.model, target, shapes, *range, precision,
                                                network::parse_batch_classes(a.batch_classes),
                                                &classes);
    for (int64_t c : classes) {
      sizes.push_back(shapes);
      sizes.back()[range->symbol] = {c};
    }
    if (!a.quiet) {
      std::string list;
      for (int64_t c : classes) list += (list.empty() ? "" : ", ") + std::to_string(c);
      std::fprintf(stderr, "kiln tune: a ranged batch %s: the kernels of one sample%s\n",
                   a.ranges[0].c_str(),
                   classes.empty() ? " (no batch classes)"
                                   : (" and of the batch classes " + list).c_str());
    }
  }
  for (const network::ExtractedTask& t : tasks)
    for (const schedules::Config& pin : network::block_choices(t, target, a.layout_choices))
      workloads.push_back({t.workload, t.occurrences, t.templates, pin, t.untuned_template,
                           t.untuned_config});
  user_check(!workloads.empty()) << a.model << ": no tunable operator in the network";

  // Opened first: a file that is not a log is refused before anything reads or writes it.
  std::unique_ptr<tuner::RecordWriter> log = open_log(a.log);
  std::vector<tuner::TuningRecord> history = load_log(a.log, target);
  std::unique_ptr<tuner::EmbeddedFarm> embedded;
  std::unique_ptr<tuner::Runner> runner = make_runner(a, target, embedded);
  o.task.builders = make_builders(a, embedded.get());
  tuner::NetworkTuner tuner(workloads, target, o, history);
  if (!a.quiet) {
    std::fprintf(stderr, "kiln tune: %s on %s: %zu workloads, %zu tasks (workload x template), %s search, "
                 "%zu trials%s%s on %s\n",
                 a.model.c_str(), target.name.c_str(), tuner.workloads(), tuner.tasks(),
                 a.tuner.c_str(), a.trials,
                 tuner.resumed_trials() ? (" (" + std::to_string(tuner.resumed_trials()) + " in the log)").c_str() : "",
                 a.time_budget.empty() ? "" : (" or " + a.time_budget).c_str(),
                 a.runner == "analyze" ? "no device: times predicted by llvm-mca"
                 : embedded            ? embedded->description().c_str()
                                       : a.farm.c_str());
    for (const auto& [tpl, path] : tuner.loaded_models())
      std::fprintf(stderr, "  cost model of %s loaded from %s\n", tpl.c_str(), path.c_str());
    const auto tasks = tuner.summary();
    for (size_t i = 0; i < tasks.size(); ++i)
      std::fprintf(stderr, "  task %2zu: %dx %s %s%s\n", i + 1, tasks[i].occurrences,
                   tasks[i].task.tpl->name().c_str(), tasks[i].task.workload.str().c_str(),
                   a.layout_choices > 1 && !tasks[i].task.pinned.values().empty()
                       ? (" blocks " + tasks[i].task.pinned.to_json()).c_str()
                       : "");
  }

  install_interrupt_handler();
  // Ctrl-C cancels the batch in flight: what the farm's calls then throw is the stop, not an
  // error of the run (the log holds every finished measurement).
  try {
    tuner.tune(*runner, *log, g_stop, [&](const tuner::NetworkProgress& p) {
      if (a.quiet) return;
      if (p.slice_done) {
        end_progress_line();
        return;
      }
      char extra[200];
      std::snprintf(extra, sizeof extra,
                    " | network: %zu/%zu trials, est. %.4f ms (%zu/%zu workloads)", p.trials,
                    p.budget, p.latency_s * 1e3, p.measured_workloads, p.workloads);
      print_progress(p.task + 1, p.tasks, p.status, extra);
    });
    print_summary(tuner, a.runner == "analyze");
    if (a.layout_choices > 1 && !g_stop)
      measure_conversions(a, target, shapes, precision, *runner, *log);
    if (!g_stop)
      measure_precision_choice(a, target, sizes, range ? range->symbol : "", precision, *runner,
                               *log);
  } catch (const std::exception&) {
    if (!g_stop) throw;
    if (!a.quiet) end_progress_line();
  }
  if (g_stop) {
    std::fprintf(stderr, "kiln tune: stopped; %s holds every measurement so far (run the same "
                 "command to go on)\n", a.log.c_str());
    return 130;
  }
  return 0;
}

}  // namespace kiln::tools
