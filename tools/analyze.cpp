// `kiln analyze MODEL.onnx --target cortex-a72`: a whole network's kernels predicted on a CPU
// nobody has at hand. Each tunable kernel the compile would build (its untuned config, or the
// best in --records) goes through llvm-mca with the core's scheduling model
// (compiler/codegen/machine_code_analysis.h); its micro-kernel's MACs per cycle, applied to
// the multiply-adds the kernel executes, give its cycles, and the sum over the network's
// calls an estimate of the network's latency at the core's clock.
//
// An estimate, labelled so: the micro-kernel rate stands for the whole kernel (packing, edges
// and memory stalls are not counted), and kernels without a multiply-accumulate loop
// (elementwise, pooling, layout changes) are listed but not counted: a lower bound that tells
// whether the kernels are in the right range before anyone buys a board.
#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "compiler/base/error.h"
#include "compiler/graph/bind.h"
#include "compiler/target/profiles.h"
#include "network/extract_tasks.h"
#include "tools/precision_args.h"
#include "tools/shape_args.h"
#include "tools/subcommands.h"
#include "tuner/builder.h"
#include "tuner/cpu_match.h"
#include "tuner/history_best.h"
#include "tuner/predict.h"

namespace kiln::tools {

namespace {

struct AnalyzeArgs {
  std::string model, target = "host", dtype = "f32";
  bool keep_last_f32 = true, json = false;
  std::vector<std::string> input_shapes, records;
  int threads = 1;
  double ghz = 0;
};

// One kernel of the network as predicted.
struct KernelEstimate {
  std::string workload, tmpl, config;
  int calls = 0;
  bool tuned = false;
  tuner::KernelPrediction p;
};

KernelEstimate estimate(const network::ExtractedTask& task, const Target& target,
                        const tuner::HistoryBest* best) {
  KernelEstimate e;
  e.workload = task.workload.str();
  e.calls = task.occurrences;
  const schedules::OpTemplate* tpl = task.untuned_template;
  schedules::Config cfg = task.untuned_config;
  if (best) {
    tuner::Dispatch d = best->dispatch(task.workload, target);
    if (!d.untuned) tpl = d.tpl, cfg = d.config, e.tuned = true;
  }
  internal_check(tpl != nullptr) << "task " << e.workload << " has no template";
  e.tmpl = tpl->name();
  e.config = cfg.to_json();
  e.p = tuner::predict_kernel(tuner::lower_template(*tpl, task.workload, target, cfg, "kernel"),
                              target);
  return e;
}

// The bottleneck's kind, for a table column: "compute", "dependency chains", "spills+unit
// A57UnitL", ...
std::string short_bottleneck(const std::string& b) {
  if (b.rfind("register spills", 0) == 0)
    return "spills+" + short_bottleneck(b.substr(b.find("then ") + 5));
  std::string head = b.substr(0, b.find(':'));
  if (head == "unit") {
    size_t at = b.find(": ") + 2;
    return "unit " + b.substr(at, b.find(' ', at) - at);
  }
  return head;
}

int run_analyze(const AnalyzeArgs& a) {
  const Target target = target_from_name(a.target);
  const CpuProfile* profile = find_cpu_profile(a.target);
  const double ghz = a.ghz > 0 ? a.ghz : profile ? tuner::prediction_ghz(target) : 0;
  graph::ShapeBindings shapes;
  for (const std::string& spec : a.input_shapes) graph::add_shape_binding(shapes, spec);
  std::vector<network::ExtractedTask> tasks =
      network::extract_tasks(a.model, target, shapes, precision_options(a.dtype, a.keep_last_f32));
  std::optional<tuner::HistoryBest> best;
  if (!a.records.empty()) {
    // The records a compile would take: per workload the deploy CPU's, predicted ones only
    // where nothing was measured (tuner/cpu_match.h).
    tuner::LoadedRecords loaded = tuner::load_records(a.records);
    for (const tuner::RecordProblem& p : loaded.problems)
      std::fprintf(stderr, "kiln analyze: skipping %s\n", p.str().c_str());
    tuner::CpuChoice chosen = tuner::choose_records_by_cpu(loaded.records, target);
    std::fputs(chosen.report.c_str(), stderr);
    best.emplace(chosen.records);
  }

  std::vector<KernelEstimate> rows;
  for (size_t i = 0; i < tasks.size(); ++i) {
    if (!a.json) std::fprintf(stderr, "\ranalysing kernel %zu of %zu", i + 1, tasks.size());
    rows.push_back(estimate(tasks[i], target, best ? &*best : nullptr));
  }
  if (!a.json) std::fprintf(stderr, "\n");

  double cycles = 0, macs = 0, weighted_peak = 0, peak_macs = 0;
  int at_80 = 0, estimated = 0;
  for (const KernelEstimate& r : rows) {
    if (!r.p.predicted()) continue;
    ++estimated;
    cycles += r.p.cycles * r.calls;
    macs += r.p.macs * r.calls;
    if (r.p.main.peak_macs_per_cycle > 0) {
      weighted_peak += r.p.main.of_peak() * r.p.macs * r.calls;
      peak_macs += r.p.macs * r.calls;
      at_80 += r.p.main.of_peak() >= 0.8;
    }
  }
  const double ms_one_core = ghz > 0 ? cycles / (ghz * 1e6) : 0;
  const double ms = ms_one_core / a.threads;  // perfect scaling: a lower bound again

  if (a.json) {
    nlohmann::json kernels = nlohmann::json::array();
    for (const KernelEstimate& r : rows) {
      nlohmann::json k = {{"workload", r.workload},
                          {"template", r.tmpl},
                          {"config", nlohmann::json::parse(r.config)},
                          {"tuned", r.tuned},
                          {"calls", r.calls},
                          {"macs", r.p.macs},
                          {"estimated", r.p.predicted()}};
      if (r.p.predicted()) {
        k["mac"] = r.p.main.loop.mac.name;
        k["macs_per_cycle"] = r.p.main.macs_per_cycle();
        k["peak_macs_per_cycle"] = r.p.main.peak_macs_per_cycle;
        k["of_peak"] = r.p.main.of_peak();
        k["cycles"] = r.p.cycles;
        k["bottleneck"] = r.p.main.bottleneck;
        k["other_loop_spills"] = r.p.other_loop_spills;
      } else {
        k["why_not"] = r.p.why_not;
      }
      kernels.push_back(k);
    }
    std::string model;
    for (const KernelEstimate& r : rows)
      if (r.p.predicted()) model = r.p.model;
    nlohmann::json j = {{"model", a.model},
                        {"target", target.name},
                        {"scheduling_model", model},
                        {"ghz", ghz},
                        {"threads", a.threads},
                        {"predicted", true},
                        {"cycles", cycles},
                        {"ms", ms},
                        {"ms_one_core", ms_one_core},
                        {"macs", macs},
                        {"kernels", kernels},
                        {"of_peak_weighted", peak_macs > 0 ? weighted_peak / peak_macs : 0}};
    std::printf("%s\n", j.dump().c_str());
    return 0;
  }

  std::string model = "?";
  for (const KernelEstimate& r : rows)
    if (r.p.predicted()) model = r.p.model;
  std::printf(
      "%s on %s: %zu tunable kernels, predicted by llvm-mca with the %s scheduling "
      "model (an estimate, not a measurement)\n\n",
      a.model.c_str(), target.name.c_str(), rows.size(), model.c_str());
  std::printf("%-4s %5s %9s %-18s %7s %-16s %s\n", "#", "calls", "MMACs", "MAC class", "of peak",
              "bottleneck", "kernel");
  for (size_t i = 0; i < rows.size(); ++i) {
    const KernelEstimate& r = rows[i];
    std::string kernel = r.tmpl + (r.tuned ? " (tuned) " : " ") + r.workload;
    if (!r.p.predicted()) {
      std::printf("%-4zu %5d %9.1f %-18s %7s %-16s %s\n", i + 1, r.calls, r.p.macs / 1e6, "-", "-",
                  "not estimated", (kernel + ": " + r.p.why_not).c_str());
      continue;
    }
    char peak[16] = "?";
    if (r.p.main.peak_macs_per_cycle > 0)
      std::snprintf(peak, sizeof peak, "%.0f%%", 100 * r.p.main.of_peak());
    std::string bottleneck =
        short_bottleneck(r.p.main.bottleneck) + (r.p.other_loop_spills ? " *" : "");
    std::printf("%-4zu %5d %9.1f %-18s %7s %-16s %s\n", i + 1, r.calls, r.p.macs / 1e6,
                r.p.main.loop.mac.name.c_str(), peak, bottleneck.c_str(), kernel.c_str());
  }
  if (std::any_of(rows.begin(), rows.end(),
                  [](const KernelEstimate& r) { return r.p.other_loop_spills; }))
    std::printf(
        "* another loop of the kernel spills registers (kiln inspect --analyze shows "
        "each loop)\n");
  std::printf("\nmicro-kernels at >= 80%% of the core's peak: %d of %d; by work, %.0f%% of peak\n",
              at_80, estimated, peak_macs > 0 ? 100 * weighted_peak / peak_macs : 0.0);
  std::printf("%.1f GMACs in estimated kernels, %.1f M cycles on one core\n", macs / 1e9,
              cycles / 1e6);
  if (ghz > 0)
    std::printf(
        "estimate: %.1f ms on %d core(s) at %.1f GHz (micro-kernel rate over every "
        "multiply-add; packing, memory stalls and the %zu kernels not estimated left "
        "out: a lower bound)\n",
        ms, a.threads, ghz, rows.size() - estimated);
  else
    std::printf("no clock for %s: give --ghz to turn cycles into milliseconds\n",
                target.name.c_str());
  return 0;
}

}  // namespace

Run add_analyze(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "analyze",
      "Predict a network's kernels on a CPU (llvm-mca with its model): each micro-kernel's "
      "share of the core's peak and bottleneck, and the whole network's latency, estimated");
  auto a = std::make_shared<AnalyzeArgs>();
  cmd->add_option("model", a->model, "The .onnx file")->required();
  cmd->add_option("--target", a->target, "A CPU or board by name (kiln targets), or a preset")
      ->capture_default_str();
  cmd->add_option("--records", a->records, "Tuning logs: their best configs (else untuned)");
  cmd->add_option("--input-shape", a->input_shapes, kInputShapeHelp);
  cmd->add_option("--dtype", a->dtype, "f32, bf16 or f16 (as kiln compile)")->capture_default_str();
  add_keep_last_flag(*cmd, a->keep_last_f32);
  cmd->add_option("--threads", a->threads, "Cores the estimate divides the work over")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  cmd->add_option("--ghz", a->ghz, "The cores' clock (default: the profile's, kiln targets)")
      ->check(CLI::PositiveNumber);
  cmd->add_flag("--json", a->json, "One JSON object: every kernel and the totals");
  return [a] { return run_analyze(*a); };
}

}  // namespace kiln::tools
