// `kiln report DIR [--profile P.json] [--records LOG...] [-o FILE.html]`: an HTML page on a
// compiled model: time per layer (tuned vs fallback), each layer against the machine's
// roofline, and the tuning curves of its tasks. Without --profile the model is run here (when
// it was built for this machine) with random inputs to time its layers.
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <set>

#include "compiler/base/error.h"
#include "kiln/model.h"
#include "kiln/runtime.h"
#include "tools/model_profile.h"
#include "tools/report_page.h"
#include "tools/subcommands.h"
#include "tools/write_file.h"
#include "tuner/records.h"

namespace kiln::tools {

namespace {

namespace fs = std::filesystem;

struct ReportArgs {
  std::string dir, profile, out;
  std::vector<std::string> records;
  int runs = 10, threads = 0;
  bool remeasure = false;
};

std::vector<ReportLayer> layers_of(const nlohmann::json& j) {
  std::vector<ReportLayer> layers;
  for (const auto& l : j["layers"]) {
    ReportLayer r;
    r.node = l.value("node", "");
    r.op = l.value("op", "");
    r.workload = l.value("workload", "");
    r.tpl = l.value("template", "");
    r.tuned = l.value("tuned", false);
    r.flops = l.value("flops", 0.0);
    r.bytes = l.value("bytes", 0.0);
    layers.push_back(std::move(r));
  }
  return layers;
}

std::vector<TunedKernel> tuned_kernels_of(const nlohmann::json& j) {
  std::vector<TunedKernel> out;
  if (!j.contains("kernels")) return out;
  for (const auto& k : j["kernels"]) {
    if (!k.value("tuned", false)) continue;
    out.push_back({k.value("name", ""), k.value("template", ""), k.value("workload", ""),
                   k.value("verdict", ""), k.value("spread", 0.0),
                   k.value("kept_untuned_config", false)});
  }
  return out;
}

// model.json's "int8_paths" and "half_paths" (the low precision named by its dtype).
std::vector<PrecisionChoice> precisions_of(const nlohmann::json& j) {
  std::vector<PrecisionChoice> out;
  for (const char* key : {"int8_paths", "half_paths"}) {
    if (!j.contains(key)) continue;
    for (const auto& l : j[key]) {
      PrecisionChoice c{l.value("node", ""), "", 0, l.value("f32_ms", 0.0), l.value("takes", "")};
      c.low = std::string(key) == "int8_paths" ? "int8" : j.value("dtype", "half");
      c.low_ms = l.value(std::string(key) == "int8_paths" ? "int8_ms" : "half_ms", 0.0);
      out.push_back(std::move(c));
    }
  }
  return out;
}

// model.json's "max_error": what the compile kept fast within it, and the errors measured.
std::string error_budget_of(const nlohmann::json& j) {
  if (!j.contains("max_error")) return "";
  const auto& m = j["max_error"];
  const size_t kept = m.value("kept_fast", nlohmann::json::array()).size();
  const size_t moved = m.value("moved", nlohmann::json::array()).size();
  std::ostringstream s;
  s << "--max-error " << m.value("budget", 0.0) << ": " << kept << " of " << kept + moved
    << " layers kept in their fast form, measured error " << m.value("error", 0.0)
    << " (all fast: " << m.value("error_all_fast", 0.0) << "), the relative RMS of each output "
    << "against the precise model on " << m.value("inputs", 0) << " inputs";
  return s.str();
}

// Times the model's layers on this machine, with random inputs (timings do not depend on the
// values). Returns nothing, with the reason in `note`, when the model cannot run here.
std::optional<ModelProfile> profile_here(const fs::path& dir, size_t steps, const ReportArgs& a,
                                         std::string* note) {
  std::optional<Model> m;
  try {
    m.emplace(Model::load((dir / "model.so").string(), (dir / "model.params").string(), a.threads));
  } catch (const RuntimeError& e) {
    *note = std::string("No layer times: the model does not run on this machine (") + e.what() +
            "). Time it on its board with kiln run --profile and pass the file as --profile.";
    return std::nullopt;
  }
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<std::vector<float>> in, out;
  for (const TensorInfo& t : m->inputs()) {
    in.emplace_back((t.bytes + 3) / 4);
    for (float& v : in.back()) v = dist(rng);
  }
  for (const TensorInfo& t : m->outputs()) out.emplace_back((t.bytes + 3) / 4);
  std::vector<const void*> ip;
  std::vector<void*> op;
  for (auto& v : in) ip.push_back(v.data());
  for (auto& v : out) op.push_back(v.data());
  m->run(std::span<const void* const>(ip), std::span<void* const>(op));  // warm-up
  ModelProfile p = profile_model(*m, ip, op, steps, a.runs);
  *note = "Layer times: median of " + std::to_string(a.runs) +
          " runs on this machine, measured by kiln report (random inputs).";
  return p;
}

// The tuning curves of the logs' tasks that this model uses.
std::vector<TuningCurve> model_curves(const std::vector<std::string>& logs,
                                      const std::vector<ReportLayer>& layers) {
  if (logs.empty()) return {};
  std::set<std::string> used;
  for (const ReportLayer& l : layers) used.insert(l.tpl + "|" + l.workload);
  tuner::LoadedRecords loaded = tuner::load_records(logs);
  for (const tuner::RecordProblem& p : loaded.problems)
    std::fprintf(stderr, "kiln: warning: %s\n", p.str().c_str());
  std::vector<tuner::TuningRecord> mine;
  for (const tuner::TuningRecord& r : loaded.records)
    if (used.count(r.template_name + "|" + r.workload.str())) mine.push_back(r);
  return curves_by_task(mine);
}

// A ranged batch's latency at its ends, its classes and a few sizes between, each the median
// of `runs` whole runs with random inputs (the times do not depend on the values).
std::vector<std::pair<int64_t, double>> latency_by_batch(const fs::path& dir, const ReportArgs& a) {
  const Model m =
      Model::load((dir / "model.so").string(), (dir / "model.params").string(), a.threads);
  if (m.max_batch() <= m.min_batch()) return {};
  std::set<int64_t> sizes = {m.min_batch(), m.max_batch()};
  for (int64_t b = 2; b < m.max_batch(); b *= 2) sizes.insert({b - 1, b, b + 1});
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> dist(-1, 1);
  auto samples = [&](const TensorInfo& t, int64_t b) {
    return t.batched ? t.bytes / static_cast<uint64_t>(m.min_batch()) * b : t.bytes;
  };
  std::vector<std::vector<float>> in, out;
  std::vector<std::vector<int64_t>> shapes;
  for (const TensorInfo& t : m.inputs()) {
    in.emplace_back((samples(t, m.max_batch()) + 3) / 4);
    for (float& v : in.back()) v = dist(rng);
    shapes.push_back(t.shape);
  }
  for (const TensorInfo& t : m.outputs()) out.emplace_back((samples(t, m.max_batch()) + 3) / 4);
  std::vector<void*> op;
  for (auto& v : out) op.push_back(v.data());
  std::vector<std::pair<int64_t, double>> rows;
  for (int64_t b : sizes) {
    if (b < m.min_batch() || b > m.max_batch()) continue;
    std::vector<Model::Tensor> tensors;
    for (size_t i = 0; i < in.size(); ++i) {
      if (m.inputs()[i].batched) shapes[i][0] = b;
      tensors.push_back({in[i].data(), shapes[i]});
    }
    m.run_shaped(tensors, op);  // warm-up
    std::vector<double> ms;
    for (int r = 0; r < std::max(3, std::min(a.runs, 20)); ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      m.run_shaped(tensors, op);
      ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                       .count());
    }
    std::nth_element(ms.begin(), ms.begin() + ms.size() / 2, ms.end());
    rows.emplace_back(b, ms[ms.size() / 2]);
  }
  return rows;
}

int run_report(const ReportArgs& a) {
  const fs::path dir(a.dir);
  nlohmann::json j = read_model_json(a.dir);
  ReportData d;
  d.model_dir = a.dir;
  d.target = j.value("target", "?");
  d.workspace_bytes = j.value("workspace_bytes", uint64_t{0});
  d.naive_workspace_bytes = j.value("naive_workspace_bytes", uint64_t{0});
  d.params_bytes = j.value("params_bytes", uint64_t{0});
  d.layers = layers_of(j);
  d.tuned = tuned_kernels_of(j);
  d.precisions = precisions_of(j);
  d.error_budget = error_budget_of(j);
  user_check(!d.layers.empty()) << (dir / "model.json").string() << " lists no layers";

  std::optional<ModelProfile> profile;
  bool measured_here = false;
  if (!a.profile.empty()) {
    profile = read_profile(a.profile);
    user_check(profile->step_ms.size() == d.layers.size())
        << a.profile << " times " << profile->step_ms.size() << " layers, but the model has "
        << d.layers.size() << ": it is the profile of another model";
    d.timing_note = "Layer times from " + a.profile + " (" + std::to_string(profile->runs) +
                    " runs, medians).";
  } else {
    std::cerr << "kiln: timing " << d.layers.size() << " layers (" << a.runs << " runs)...\n";
    profile = profile_here(dir, d.layers.size(), a, &d.timing_note);
    measured_here = profile.has_value();
  }
  if (profile) {
    for (size_t i = 0; i < d.layers.size(); ++i) d.layers[i].ms = profile->step_ms[i];
    d.total_ms = profile->total_ms;
    d.threads = profile->threads;
  }
  // The roofline is this machine's: it only describes times measured here.
  if (measured_here) {
    std::cerr << "kiln: measuring this machine's roofline (cached after the first time)...\n";
    d.roofline = machine_roofline(a.remeasure);
    if (j.contains("batch")) {
      std::cerr << "kiln: timing the ranged batch at several sizes...\n";
      d.batch_ms = latency_by_batch(dir, a);
    }
  }
  d.curves = model_curves(a.records, d.layers);

  const std::string out = a.out.empty() ? (dir / "report.html").string() : a.out;
  write_file_atomically(out, report_html(d));
  std::cout << "wrote " << out << "\n";
  return 0;
}

}  // namespace

Run add_report(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "report", "An HTML page on a compiled model: layer times, roofline, tuning curves");
  auto a = std::make_shared<ReportArgs>();
  cmd->add_option("dir", a->dir, "Directory that kiln compile wrote")->required();
  cmd->add_option("--profile", a->profile,
                  "Layer times from kiln run --profile (default: time the model here)");
  cmd->add_option("--records", a->records, "Tuning logs: adds the curves of the model's tasks");
  cmd->add_option("-o,--out", a->out, "The HTML file (default: DIR/report.html)");
  cmd->add_option("--runs", a->runs, "Timed runs when timing here")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  cmd->add_option("--threads", a->threads, "Threads when timing here (0: all CPUs)")
      ->check(CLI::Range(0, 1024));
  cmd->add_flag("--remeasure-roofline", a->remeasure,
                "Measure the machine's peak and bandwidth again instead of using the cache");
  return [a] { return run_report(*a); };
}

}  // namespace kiln::tools
