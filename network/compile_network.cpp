#include "network/compile_network.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <iomanip>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>

#include "network/artifact.h"
#include "network/error_budget.h"
#include "network/layout_plan.h"
#include "network/lower_network.h"
#include "network/memory_plan.h"
#include "network/node_choice.h"
#include "network/prepare_graph.h"
#include "network/ranged_batch.h"
#include "network/records_use.h"
#include "tuner/cpu_match.h"
#include "tuner/history_best.h"

namespace kiln::network {

namespace {

std::vector<LayerRow> layer_rows(const NetworkProgram& p) {
  std::vector<LayerRow> rows;
  for (const Step& s : p.steps) {
    const Task& t = p.tasks[s.task];
    uint64_t bytes = 0;
    for (int b : s.args) bytes += p.buffers[b].bytes;
    rows.push_back({s.node, s.op_type, t.workload.str(), t.tpl->name(), t.workload.dtype.str(),
                    !t.untuned, t.flops, bytes});
  }
  return rows;
}

std::string model_json(const CompileReport& r, const Target& target) {
  using nlohmann::json;
  const NetworkProgram& p = r.program;
  json j;
  auto tensors = [](const std::vector<std::string>& names,
                    const std::vector<std::vector<int64_t>>& shapes,
                    const std::vector<ir::DataType>& dtypes) {
    json a = json::array();
    for (size_t i = 0; i < names.size(); ++i)
      a.push_back({{"name", names[i]}, {"shape", shapes[i]}, {"dtype", dtypes[i].str()}});
    return a;
  };
  j["target"] = target.name;
  j["dtype"] = r.dtype.str();  // the --dtype asked for; each kernel's own is in "kernels"
  j["inputs"] = tensors(p.input_names, p.input_shapes, p.input_dtypes);
  j["outputs"] = tensors(p.output_names, p.output_shapes, p.output_dtypes);
  if (p.batch.max > 0) {
    // The shapes above are one sample's; a run of b samples scales axis 0 of the batched ones.
    std::vector<int64_t> classes = {1};
    for (const NetworkProgram::BatchClass& c : p.batch_classes) classes.push_back(c.batch);
    j["batch"] = {{"symbol", p.batch_symbol},
                  {"min", p.batch.min},
                  {"max", p.batch.max},
                  {"classes", classes},
                  {"pad", p.batch.pad}};
    for (size_t i = 0; i < p.input_names.size(); ++i)
      j["inputs"][i]["batched"] = static_cast<bool>(p.batch.batched_inputs[i]);
    for (auto& out : j["outputs"]) out["batched"] = true;
  }
  j["workspace_bytes"] = p.workspace_bytes;
  j["naive_workspace_bytes"] = p.naive_workspace_bytes;
  j["params_bytes"] = p.params.size();
  j["layers"] = json::array();
  for (const LayerRow& l : r.layers)
    j["layers"].push_back({{"node", l.node}, {"op", l.op_type}, {"workload", l.workload},
                           {"dtype", l.dtype},
                           {"template", l.tpl}, {"tuned", l.tuned}, {"flops", l.flops},
                           {"bytes", l.bytes}});
  if (!r.int8_kept_float.empty()) {
    j["int8_kept_float"] = json::array();
    for (const KeptFloat& k : r.int8_kept_float)
      j["int8_kept_float"].push_back({{"node", k.node}, {"reason", k.reason}});
  }
  // Each layer's two forms as the records timed them (int8_paths.h, half_paths.h).
  auto two_forms_json = [](const std::vector<TwoForms>& rows, const char* low) {
    json out = json::array();
    for (const TwoForms& f : rows)
      out.push_back({{"node", f.layer},
                     {std::string(low) + "_ms", f.low_s * 1e3},
                     {"f32_ms", f.f32_s * 1e3},
                     {"takes", f.takes}});
    return out;
  };
  // A layer --max-error moved takes its precise form whatever its times say.
  auto fitted = [&](std::vector<TwoForms> rows, const std::string& precise) {
    if (r.error_fit)
      for (TwoForms& f : rows)
        if (std::count(r.error_fit->moved.begin(), r.error_fit->moved.end(), f.layer))
          f.takes = precise + " (--max-error)";
    return rows;
  };
  if (!r.int8_paths.convs.empty())
    j["int8_paths"] = two_forms_json(fitted(two_forms(r.int8_paths), "float"), "int8");
  if (!r.half_paths.layers.empty())
    j["half_paths"] = two_forms_json(fitted(two_forms(r.half_paths), "f32"), "half");
  if (const auto& f = r.error_fit)
    j["max_error"] = {{"budget", f->max_error}, {"inputs", f->inputs},
                      {"error", f->error},      {"error_all_fast", f->error_all_fast},
                      {"moved", f->moved},      {"kept_fast", f->kept_fast}};
  if (!r.provenance.logs.empty()) {
    json logs = json::array(), kernels = json::array();
    for (const LogDigest& l : r.provenance.logs)
      logs.push_back({{"file", l.file}, {"checksum", l.checksum}});
    for (const KernelRecord& k : r.provenance.kernels)
      kernels.push_back({{"kernel", k.kernel}, {"record", k.checksum}});
    j["records"] = {{"logs", logs}, {"kernels", kernels}};
  }
  j["kernels"] = json::array();
  for (const Task& t : p.tasks)
    j["kernels"].push_back(
        {{"name", t.kernel},
         {"template", t.tpl->name()},
         {"dtype", t.workload.dtype.str()},
         {"output_dtype",
          t.workload.param_or("out_f32", 0) != 0 ? std::string("f32") : t.workload.dtype.str()},
         {"workload", t.workload.str()},
         {"config", json::parse(t.config.to_json())},
         {"tuned", !t.untuned},
         {"kept_untuned_config", t.kept_untuned_config},
         {"spread", t.tuned_spread},
         {"verdict", t.verdict},
         {"calls", t.calls}});
  return j.dump(2) + "\n";
}

std::string ms(double seconds) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(4) << seconds * 1e3 << " ms";
  return s.str();
}

// "tuned 0.1234 ms, spread 3%, 1.18x faster than the untuned config (p=0.002, 9 vs 9 times)",
// or "..., kept the untuned config" where tuning found nothing faster, or nothing faster
// beyond noise.
std::string tuned_note(const Task& t) {
  std::ostringstream s;
  s << "tuned " << ms(t.tuned_cost_s);
  if (t.tuned_spread > 0) s << ", spread " << std::lround(t.tuned_spread * 100) << "%";
  if (!t.verdict.empty()) s << ", " << t.verdict;
  if (t.kept_untuned_config) s << ", kept the untuned config";
  return s.str();
}

// The network's latency as the records measured it: calls x time over the tuned kernels.
std::string estimated_latency(const NetworkProgram& p) {
  double sum = 0;
  int tuned = 0, kept = 0, calls = 0, tuned_calls = 0;
  for (const Task& t : p.tasks) {
    calls += t.calls;
    if (t.untuned) continue;
    sum += t.calls * t.tuned_cost_s;
    ++tuned;
    kept += t.kept_untuned_config;
    tuned_calls += t.calls;
  }
  if (tuned == 0) return "";
  std::ostringstream s;
  s << "estimated latency from the records: " << ms(sum) << " (" << tuned << " of "
    << p.tasks.size() << " kernels tuned";
  if (kept > 0) s << ", " << kept << " of them kept their untuned config";
  s << ", " << tuned_calls << " of " << calls << " calls"
    << (tuned_calls < calls ? "; untuned kernels not counted" : "") << ")\n";
  return s.str();
}

// The bytes a run of the program needs (arena, params, inputs and outputs) must fit in a 64-bit
// board's address space (2^47 bytes of user space on x86-64 and AArch64 Linux): a binding such
// as batch=2^40 is refused here, naming the bytes, rather than failing to allocate later.
void check_fits_in_memory(const NetworkProgram& p) {
  long double io = 0;
  for (const Buffer& b : p.buffers)
    if (b.kind == BufferKind::Input || b.kind == BufferKind::Output) io += b.bytes;
  const long double total = io + p.workspace_bytes + p.params.size();
  user_check(total <= graph::kAddressSpaceBytes)
      << "the model needs " << std::setprecision(4) << total << " bytes to run (inputs and outputs "
      << io << ", activations " << static_cast<long double>(p.workspace_bytes)
      << "): more than a 64-bit board can address (2^47 bytes); bind smaller --input-shape sizes";
}

// The prepared network built with the records: its kernel calls, packed weights and layout
// conversions, then one arena for all activations.
NetworkProgram lower_prepared(graph::Graph& g, const Target& target,
                              const std::vector<tuner::TuningRecord>& records,
                              std::string* layout_choice) {
  tuner::HistoryBest history(records);
  // With records of several channel blocks per conv, the blocks are chosen for the whole
  // network (kernel times + the conversions between neighbours), not per kernel.
  std::optional<LayoutPlan> plan;
  if (!records.empty()) {
    plan = plan_layouts(g, target, records);
    if (layout_choice) *layout_choice = describe(*plan);
  }
  NetworkProgram program = lower_network(g, target, history, plan ? &plan->choices : nullptr);
  plan_memory(program);
  return program;
}

// The layers `prepared` runs in a fast form: the quantized convs on their int8 kernel, the
// conv/dense layers that read the half type.
std::set<std::string> fast_in(const PreparedGraph& prepared, const Int8PathPlan& int8,
                              ir::DataType half) {
  std::set<std::string> fast;
  std::set<std::string> kept_float;
  for (const KeptFloat& k : prepared.int8_kept_float) kept_float.insert(k.node);
  for (const Int8PathTimes& c : int8.convs)
    if (!kept_float.count(c.conv)) fast.insert(c.conv);
  const graph::Graph& g = prepared.graph;
  for (const graph::Node& n : g.nodes) {
    if (n.op_type != "Conv" && n.op_type != "Gemm" && n.op_type != "MatMul") continue;
    if (const auto in = g.type_of(n.inputs.at(0));
        half != ir::DataType::f32() && in && in->dtype == half)
      fast.insert(node_key(n.name, n.outputs));
  }
  return fast;
}

// Those layers, with the time the records say each saves.
std::vector<FastLayer> fast_layers(const CompileReport& r, const std::set<std::string>& fast) {
  std::vector<FastLayer> out;
  for (const Int8PathTimes& c : r.int8_paths.convs)
    if (fast.count(c.conv)) out.push_back({c.conv, true, c.measured() ? c.float_s - c.int8_s : 0});
  for (const HalfPathTimes& l : r.half_paths.layers)
    if (fast.count(l.node)) out.push_back({l.node, false, l.measured() ? l.f32_s - l.half_s : 0});
  return out;
}

// The network built at `input_shapes` with the records. With records, each quantized conv
// takes the path they time faster (int8_paths.h), and with --dtype bf16|f16 each layer the
// form they time faster (half_paths.h); with --max-error, as many of those fast layers as keep
// the outputs within it (error_budget.h). `r` takes the graph-level figures (the first
// program's: a batch class only repeats them).
NetworkProgram build_program(const CompileOptions& o, const graph::ShapeBindings& input_shapes,
                             const tuner::LoadedRecords& loaded, CompileReport& r) {
  const std::vector<tuner::TuningRecord>& records = loaded.records;
  // Import, bind input shapes, graph passes, BN folding, fusion: what `kiln tune` extracts
  // its tasks from, so the tuned workloads are the compiled ones.
  auto prepare = [&](const PrecisionOptions& p) {
    return prepare_graph(o.model_path, input_shapes, o.target, p);
  };
  PreparedGraph prepared = prepare(o.precision);
  if (!records.empty() && (prepared.int8_convs > 0 || o.precision.dtype != ir::DataType::f32())) {
    PrecisionOptions precision = o.precision;
    // A path forced on every conv (Int8Paths::Force) is not the records' to change.
    if (prepared.int8_convs > 0 && o.precision.int8.force == Int8Paths::Force::None) {
      r.int8_paths = plan_int8_paths(o.model_path, input_shapes, o.target, o.precision, records);
      precision.int8 = r.int8_paths.paths();
    }
    r.half_paths = plan_half_paths(o.model_path, input_shapes, o.target, o.precision, records);
    precision.half_measured_f32 = r.half_paths.measured_f32();
    // The graph is prepared again only when the records change anything.
    if (!precision.int8.measured.empty() || !precision.half_measured_f32.empty())
      prepared = prepare(precision);
    if (o.error_budget) {
      auto program_for = [&](const PrecisionOptions& p) {
        PreparedGraph at = prepare(p);
        return FastProgram{lower_prepared(at.graph, o.target, records, nullptr),
                           fast_in(at, r.int8_paths, o.precision.dtype)};
      };
      PrecisionOptions fitted;
      r.error_fit =
          fit_error_budget(*o.error_budget, o.target, precision,
                           fast_layers(r, fast_in(prepared, r.int8_paths, o.precision.dtype)),
                           program_for, fitted, o.progress);
      if (!r.error_fit->moved.empty()) prepared = prepare(fitted);
    }
  }
  user_check(!o.error_budget || r.error_fit)
      << "--max-error chooses among the layers that --records times in two precisions: give "
         "--records (kiln tune --precisions) and a quantized model or a --dtype bf16|f16";
  r.bn_folded = prepared.bn_folded;
  r.bn_scale_shifts = prepared.bn_scale_shifts;
  r.convs_split = prepared.convs_split;
  r.epilogues_fused = prepared.epilogues_fused;
  r.precision = prepared.precision;
  r.int8_kept_float = prepared.int8_kept_float;
  return lower_prepared(prepared.graph, o.target, records, &r.layout_choice);
}

}  // namespace

CompileReport compile_network(const CompileOptions& o) {
  auto start = std::chrono::steady_clock::now();
  CompileReport r;
  r.dtype = o.precision.dtype;
  tuner::LoadedRecords loaded;
  std::string cpu_report;  // which CPU's records each workload took (cpu_match.h)
  if (!o.record_logs.empty()) {
    loaded = tuner::load_records(o.record_logs);
    tuner::CpuChoice chosen = tuner::choose_records_by_cpu(loaded.records, o.target, o.records_cpu);
    loaded.records = std::move(chosen.records);
    cpu_report = std::move(chosen.report);
  }
  if (!o.pin_logs.empty()) {  // pinned configs win over the logs' for their workloads
    tuner::LoadedRecords pins = tuner::load_records(o.pin_logs);
    loaded.records = tuner::with_pins(pins.records, loaded.records);
    loaded.problems.insert(loaded.problems.end(), pins.problems.begin(), pins.problems.end());
  }
  std::vector<std::string> logs = o.pin_logs;
  logs.insert(logs.end(), o.record_logs.begin(), o.record_logs.end());
  user_check(!o.batch_range || !o.error_budget)
      << "--max-error is not yet taken with --range: compile one batch size";
  if (!o.batch_range) {
    r.program = build_program(o, o.input_shapes, loaded, r);
  } else {
    // A ranged batch: checked on the graph first, then built for one sample and for each batch
    // class, all in one program (ranged_batch.h).
    const BatchRange batch = plan_batch_range(o.model_path, o.input_shapes, *o.batch_range);
    graph::ShapeBindings shapes = o.input_shapes;
    shapes[batch.symbol] = {1};
    r.program = build_program(o, shapes, loaded, r);
    for (int64_t size : batch_classes(batch, r.program, o.batch_classes)) {
      shapes[batch.symbol] = {size};
      CompileReport ignored;
      add_batch_class(r.program, build_program(o, shapes, loaded, ignored), size);
    }
    r.program.batch_symbol = batch.symbol;
    r.program.batch = batch.batch;
    // A run that streams the weights costs about the same for 3 samples as for 4: padding the
    // last run up to a class beats running what is left as several (ranged_batch.h).
    r.program.batch.pad = !r.program.batch_classes.empty() &&
                          weight_reuse(r.program) < kMinFlopsPerParamByte;
  }
  if (!logs.empty()) {
    r.records_use = describe_records_use(loaded, o.target, r.program) + cpu_report;
    r.provenance = records_provenance(logs, loaded.records, o.target, r.program);
  }
  check_fits_in_memory(r.program);
  r.layers = layer_rows(r.program);
  std::string name = o.name.empty() ? std::filesystem::path(o.model_path).stem().string() : o.name;
  write_artifact(r.program, o.target, name.empty() ? "model" : name, model_json(r, o.target),
                 o.out_dir);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

std::string format_report(const CompileReport& r) {
  const NetworkProgram& p = r.program;
  std::ostringstream s;
  s << "tasks (" << p.tasks.size() << " unique kernels, " << p.steps.size() << " calls):\n";
  for (const Task& t : p.tasks)
    s << "  " << t.calls << "x  " << t.tpl->name() << "  " << t.workload.str()
      << (t.untuned ? "  [fallback]" : "  [" + tuned_note(t) + "]") << "\n";
  s << "layers:\n";
  for (size_t i = 0; i < r.layers.size(); ++i) {
    const LayerRow& l = r.layers[i];
    s << "  " << i << "  " << l.node << "  " << l.op_type << "  " << l.workload << "  " << l.tpl
      << "  " << (l.tuned ? "tuned" : "fallback") << "\n";
  }
  // A count and where to look, not the list: a network has dozens of untuned kernels and
  // the task list above already marks each one.
  const size_t untuned =
      std::count_if(p.tasks.begin(), p.tasks.end(), [](const Task& t) { return t.untuned; });
  if (untuned > 0)
    s << "warning: " << untuned << " of " << p.tasks.size()
      << " kernels untuned (fallback configs): the [fallback] rows above, \"tuned\": false in "
      << "model.json\n";
  if (!r.records_use.empty()) s << r.records_use;
  s << estimated_latency(p);
  if (!r.layout_choice.empty()) s << r.layout_choice << "\n";
  s << "folded " << r.bn_folded << " BatchNormalization";
  if (r.bn_scale_shifts > 0) s << " (" << r.bn_scale_shifts << " more as scale-shift kernels)";
  s << ", fused " << r.epilogues_fused << " epilogue ops";
  if (r.convs_split > 0)
    s << ", split " << r.convs_split << " convs whose taps mostly read padding into regions";
  s << "\n";
  if (r.dtype != ir::DataType::f32()) {
    s << "precision " << r.dtype.str() << ": " << r.precision.str() << "\n";
    // Without records every layer with a half kernel runs half, which is not always faster.
    if (r.half_paths.layers.empty() && r.precision.half_nodes > 0)
      s << "note: every layer with a " << r.dtype.str() << " kernel runs in " << r.dtype.str()
        << "; on some CPUs f32 is faster for many of them (Xeons without AMX issue vdpbf16ps "
        << "at half the f32 FMA rate): kiln tune --precisions f32," << r.dtype.str()
        << " times each layer both ways, and compile --records then keeps the faster\n";
  }
  if (const std::string paths = describe(r.int8_paths); !paths.empty()) s << paths << "\n";
  if (const std::string paths = describe(r.half_paths); !paths.empty()) s << paths << "\n";
  if (r.error_fit) s << describe(*r.error_fit) << "\n";
  if (!r.int8_kept_float.empty()) {
    std::map<std::string, int> reasons;
    // A measured reason carries the conv's own times (model.json "int8_paths" has them): one
    // count for all.
    for (const KeptFloat& k : r.int8_kept_float)
      ++reasons[k.reason.rfind(kMeasuredSlower, 0) == 0
                    ? std::string(kMeasuredSlower) + ", model.json \"int8_paths\" has the times"
                    : k.reason];
    s << "int8: " << r.int8_kept_float.size()
      << " quantized convs kept in f32 (model.json \"int8_kept_float\" names them):\n";
    for (const auto& [reason, count] : reasons) s << "  " << count << "x  " << reason << "\n";
  }
  if (p.batch.max > 0) {
    s << "batch " << p.batch_symbol << " = " << p.batch.min << ".." << p.batch.max << ": ";
    if (p.batch_classes.empty()) {
      s << "built for one sample, a batch of b runs it b times";
    } else {
      s << "built for batches of 1";
      for (const NetworkProgram::BatchClass& c : p.batch_classes) s << ", " << c.batch;
      s << (p.batch.pad ? ", a batch runs as the largest that fit, the last run padded up to "
                            "the smallest that holds the rest"
                          : ", a batch runs as the largest that fit, in turn");
    }
    double flops = 0;
    for (const Step& step : p.steps) flops += p.tasks[step.task].flops;
    s << " (one sample: " << std::setprecision(3) << flops / 1e6 << " MFLOP, "
      << weight_reuse(p) << " flops per weight byte; classes by default below "
      << kSmallSampleFlops / 1e6 << " MFLOP or " << kMinFlopsPerParamByte << ")\n";
  }
  s << "arena " << p.workspace_bytes << " bytes (naive sum " << p.naive_workspace_bytes
    << "), params " << p.params.size() << " bytes\n";
  s << "compile time " << r.seconds << " s\n";
  return s.str();
}

}  // namespace kiln::network
