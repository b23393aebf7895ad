#include "tools/tune_precisions.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <set>

#include "compiler/base/error.h"
#include "network/half_paths.h"
#include "network/int8_paths.h"
#include "network/prepare_graph.h"
#include "tools/precision_args.h"
#include "tuner/task_tuner.h"

namespace kiln::tools {
namespace {

std::set<std::string> split(const std::string& list) {
  std::set<std::string> named;
  for (size_t at = 0; !list.empty() && at != std::string::npos;) {
    const size_t comma = list.find(',', at);
    named.insert(list.substr(at, comma == std::string::npos ? std::string::npos : comma - at));
    at = comma == std::string::npos ? comma : comma + 1;
  }
  return named;
}

// Whether the model has a quantized conv that an int8 kernel can run.
bool has_int8_convs(const TuneArgs& a, const Target& target, const graph::ShapeBindings& shapes) {
  network::PrecisionOptions on_float;
  on_float.int8.force = network::Int8Paths::Force::Float;
  const auto kept = network::prepare_graph(a.model, shapes, target, on_float).int8_kept_float;
  return std::any_of(kept.begin(), kept.end(), [](const network::KeptFloat& k) {
    return k.reason == network::kForcedFloatPath;
  });
}

// Measures each kernel once, in its exact config.
void measure(const TuneArgs& a, const Target& target, tuner::Runner& runner,
             tuner::RecordWriter& log, const std::vector<network::KernelToMeasure>& kernels) {
  tuner::TuneOptions o = task_options(a);
  o.batch = 1;
  o.remeasure_top = 0;
  o.search = "grid";
  for (const network::KernelToMeasure& k : kernels) {
    if (g_stop) return;
    tuner::TuneTask task{k.tpl, k.workload, target, k.config, {}};
    tuner::TaskTuner(task, o).tune(1, runner, {tuner::append_to(log)}, g_stop);
  }
}

// The choice's three steps for either plan: the unmeasured kernels, then those of the layers
// moved to f32 again (one timing caught by a busy moment of the machine, seen as an int8
// kernel at 2.5x its time in every repeat of one measurement, must not decide; the records'
// best counts), then the table.
template <class Plan>
void measure_both_forms(const TuneArgs& a, const Target& target, tuner::Runner& runner,
                        tuner::RecordWriter& log, const std::function<Plan()>& plan_now) {
  Plan plan = plan_now();
  if (!a.quiet)
    std::fprintf(stderr, "kiln tune: measuring %zu kernels of both forms\n",
                 plan.unmeasured.size());
  measure(a, target, runner, log, plan.unmeasured);
  plan = plan_now();
  const std::vector<network::KernelToMeasure> again = plan.kernels_moved_to_f32();
  if (!a.quiet && !again.empty())
    std::fprintf(stderr,
                 "kiln tune: timing again the %zu kernels of the layers the times move "
                 "to f32\n",
                 again.size());
  measure(a, target, runner, log, again);
  plan = plan_now();
  std::printf("%s%s\n", network::format_table(plan).c_str(), network::describe(plan).c_str());
}

// The choice at one size.
void measure_choice_at(const TuneArgs& a, const Target& target, const graph::ShapeBindings& shapes,
                       const network::PrecisionOptions& precision, tuner::Runner& runner,
                       tuner::RecordWriter& log) {
  if (precision.int8.force == network::Int8Paths::Force::Both) {
    network::PrecisionOptions rule = precision;
    rule.int8 = {};
    measure_both_forms<network::Int8PathPlan>(a, target, runner, log, [&] {
      return network::plan_int8_paths(a.model, shapes, target, rule, load_log(a.log, target));
    });
  } else if (precision.half_and_f32) {
    network::PrecisionOptions half = precision;
    half.half_and_f32 = false;
    measure_both_forms<network::HalfPathPlan>(a, target, runner, log, [&] {
      return network::plan_half_paths(a.model, shapes, target, half, load_log(a.log, target));
    });
  }
}

}  // namespace

network::PrecisionOptions network_precision(const TuneArgs& a, const Target& target,
                                            const graph::ShapeBindings& shapes) {
  std::set<std::string> named = split(a.precisions);
  const bool automatic = a.workload.dtype == "auto";
  const std::string flag = automatic ? "--dtype auto" : "--precisions " + a.precisions;
  if (named.empty() && !automatic) return precision_options(a.workload.dtype, a.keep_last_f32);
  user_check(!automatic || named.empty()) << "give --dtype auto or --precisions, not both";
  user_check(automatic || a.workload.dtype == "f32")
      << "--precisions names the types itself: drop --dtype " << a.workload.dtype;
  for (const std::string& p : named)
    user_check(p == "f32" || p == "int8" || p == "bf16" || p == "f16")
        << "--precisions: '" << p << "' is not a precision (valid: f32, int8, bf16, f16)";
  // Prepared once, where asked: whether the model has quantized convs.
  const bool quantized = (automatic || named.count("int8")) && has_int8_convs(a, target, shapes);
  if (automatic) {
    // A quantized model chooses between its int8 and float paths; a float one between f32
    // and the half type the target computes in.
    if (quantized)
      named = {"f32", "int8"};
    else if (network::has_half_kernels(target, ir::DataType::bf16()))
      named = {"f32", "bf16"};
    else if (network::has_half_kernels(target, ir::DataType::f16()))
      named = {"f32", "f16"};
    user_check(named.size() == 2)
        << "--dtype auto: " << a.model << " has no quantized conv and target " << target.name
        << " has no bf16 or f16 kernels: f32 is the only precision to run it in";
  }
  user_check(named.size() == 2 && named.count("f32"))
      << flag << ": name f32 and the one to choose it against (f32,int8, f32,bf16 or f32,f16)";
  network::PrecisionOptions p = precision_options("f32", a.keep_last_f32);
  if (named.count("int8")) {
    user_check(quantized)
        << flag << ": " << a.model << " has no quantized conv with an int8 kernel (quantize "
        << "the model first: kiln quantize MODEL.onnx --calibration DIR -o Q.onnx)";
    p.int8.force = network::Int8Paths::Force::Both;
    return p;
  }
  const std::string half = named.count("bf16") ? "bf16" : "f16";
  p = precision_options(half, a.keep_last_f32);
  user_check(network::has_half_kernels(target, p.dtype))
      << flag << ": target " << target.name << " has no " << half << " conv2d or dense kernels";
  p.half_and_f32 = true;
  return p;
}

void measure_precision_choice(const TuneArgs& a, const Target& target,
                              const std::vector<graph::ShapeBindings>& sizes,
                              const std::string& batch_symbol,
                              const network::PrecisionOptions& precision, tuner::Runner& runner,
                              tuner::RecordWriter& log) {
  for (const graph::ShapeBindings& shapes : sizes) {
    if (g_stop) return;
    if (sizes.size() > 1)
      std::printf("%s = %lld:\n", batch_symbol.c_str(),
                  static_cast<long long>(shapes.at(batch_symbol).at(0)));
    measure_choice_at(a, target, shapes, precision, runner, log);
  }
}

}  // namespace kiln::tools
