// `kiln compile MODEL.onnx --target T [--records LOG...] [--pins PINS...]
// [--input-shape NAME=1,3,224,224 ...] [--range batch=1..16]
// [--dtype bf16|f16 [--no-keep-last-f32] | --dtype int8 --calibration DIR [--keep-float NODE...]]
// [--max-error E --calibration DIR]
// -o DIR`: an ONNX network to a model directory (network/compile_network.h). With --dtype int8
// the float model is first quantized as `kiln quantize` does (tools/calibration.h) and the QDQ
// model it gives is what compiles.
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>

#include "compiler/base/error.h"
#include "compiler/base/output_paths.h"
#include "compiler/graph/bind.h"
#include "compiler/graph/onnx_import.h"
#include "network/compile_network.h"
#include "network/ranged_batch.h"
#include "runtime/process/temp_dir.h"
#include "tools/calibration.h"
#include "tools/precision_args.h"
#include "tools/shape_args.h"
#include "tools/subcommands.h"
#include "tools/write_file.h"

namespace kiln::tools {

namespace {

struct CompileArgs {
  std::string model, target = "host", out, name, dtype = "f32", calibration;
  bool keep_last_f32 = true;
  std::vector<std::string> records, pins, input_shapes, keep_float, ranges;
  std::string batch_classes = "auto", records_cpu = "auto";
  double percentile = 100;
  bool entropy = false;
  std::optional<double> max_error;
};

// --max-error E: the budget, measured on the .npy samples of --calibration.
network::ErrorBudget error_budget(const CompileArgs& a) {
  user_check(!a.calibration.empty())
      << "--max-error needs --calibration DIR: a folder of .npy samples of the model's input, "
         "on which the outputs' error is measured";
  user_check(*a.max_error >= 0 && std::isfinite(*a.max_error))
      << "--max-error " << *a.max_error << ": a relative error, 0 or more (e.g. 0.01)";
  user_check(!a.records.empty())
      << "--max-error chooses among the layers that --records times in two precisions: give "
         "--records (kiln tune --precisions)";
  user_check(a.ranges.empty())
      << "--max-error is not yet taken with --range: compile one batch size";
  // Against the quantized model's float paths, which is not what a user of --dtype int8 on a
  // float model would read the budget as (the float model itself).
  user_check(a.dtype != "int8")
      << "--max-error weighs int8 kernels against the quantized model's float paths, not "
         "against the float model: quantize first (kiln quantize, whose report names the "
         "layers furthest from float; --keep-float keeps them), then compile the quantized "
         "model with --records and --max-error";
  const graph::Graph g = graph::import_onnx_file(a.model);
  user_check(g.inputs.size() == 1) << a.model << ": has " << g.inputs.size()
                                   << " inputs; --max-error takes models of one input today";
  return {*a.max_error, calibration_sets(a.calibration, g.inputs[0], "--calibration")};
}

// The QDQ model of `a.model` calibrated on `a.calibration`, written into `scratch`: what
// --dtype int8 compiles. Its name stays the float file's (model.h, model.json).
std::string quantized_model(const CompileArgs& a, const TempDir& scratch) {
  user_check(!a.calibration.empty())
      << "--dtype int8 needs --calibration DIR: a folder of .npy samples of the model's input "
         "(the activations' ranges come from them)";
  std::ifstream in(a.model, std::ios::binary);
  user_check(in.good()) << a.model << ": cannot read";
  std::stringstream bytes;
  bytes << in.rdbuf();
  const std::string path = scratch.file(std::filesystem::path(a.model).filename().string());
  write_file_atomically(path, quantize_with_report(bytes.str(), a.model, a.calibration,
                                                   "--calibration", quantize_options(a.keep_float, a.percentile, a.entropy)));
  return path;
}


int run_compile(const CompileArgs& a) {
  // A bad -o fails now, not after the compile (write_artifact checks it again at the end).
  check_replaceable_folder(a.out, "-o");
  network::CompileOptions o;
  o.model_path = a.model;
  o.target = target_from_name(a.target);
  o.record_logs = a.records;
  o.records_cpu = a.records_cpu;
  o.pin_logs = a.pins;
  o.out_dir = a.out;
  o.name = a.name;
  const bool int8 = a.dtype == "int8";
  user_check(int8 || ((a.calibration.empty() || a.max_error) && a.keep_float.empty() &&
                      a.percentile == 100 && !a.entropy))
      << "--calibration (without --max-error), --keep-float, --percentile and --entropy are for "
         "--dtype int8";
  if (a.max_error) {
    o.error_budget = error_budget(a);
    o.progress = &std::cout;
  }
  std::optional<TempDir> scratch;
  if (int8) {
    scratch.emplace("kiln-int8");
    o.model_path = quantized_model(a, *scratch);
  }
  o.precision = precision_options(int8 ? "f32" : a.dtype, a.keep_last_f32);
  for (const std::string& spec : a.input_shapes) graph::add_shape_binding(o.input_shapes, spec);
  user_check(a.ranges.size() <= 1)
      << "one --range per model today (a ranged batch); got " << a.ranges.size();
  if (!a.ranges.empty()) o.batch_range = graph::parse_dim_range(a.ranges[0]);
  user_check(a.batch_classes == "auto" || o.batch_range)
      << "--batch-classes goes with --range (a ranged batch)";
  o.batch_classes = network::parse_batch_classes(a.batch_classes);
  network::CompileReport r = network::compile_network(o);
  std::cout << network::format_report(r) << "wrote " << a.out
            << "/model.so, model.params, model.json, model.a, model.h\n";
  return 0;
}

}  // namespace

Run add_compile(CLI::App& app) {
  auto* cmd = app.add_subcommand("compile", "Compile an ONNX network into a model directory");
  auto a = std::make_shared<CompileArgs>();
  cmd->add_option("model", a->model, "The .onnx file")->required();
  cmd->add_option("--target", a->target, "Target preset")->capture_default_str();
  cmd->add_option("--records", a->records,
                  "Tuning logs (apply-history-best); else fallback configs. A quantized model's "
                  "convs take the path, int8 or float, the logs time faster where they time both "
                  "(kiln tune --precisions int8,f32)");
  cmd->add_option("--records-cpu", a->records_cpu,
                  "Whose records a workload takes first: auto (this machine for --target host, "
                  "else the CPU with the most records), host, any, or part of a CPU's name; "
                  "a workload without them falls back to a CPU with the same features, then any")
      ->capture_default_str();
  cmd->add_option("--pins", a->pins,
                  "Pinned configs (kiln records pin): built for their workloads whatever --records "
                  "holds");
  cmd->add_option("--input-shape", a->input_shapes, kInputShapeHelp);
  cmd->add_option("--range", a->ranges,
                  "SYMBOL=MIN..MAX: one artifact for every batch in the range (SYMBOL the inputs' "
                  "axis 0, named by the file or by --input-shape x=SYMBOL,...; each sample must "
                  "be computed on its own)");
  cmd->add_option("--batch-classes", a->batch_classes,
                  "With --range: larger batches also built, run at once (e.g. 4,16), or none; "
                  "auto: 2,4,8,16 when one sample is small or streams its weights, else none")
      ->capture_default_str();
  cmd->add_option("-o,--output", a->out, "Output directory")->required();
  cmd->add_option("--name", a->name,
                  "The model's name (model.h declares kiln_model_NAME); default: the file's stem");
  cmd->add_option("--dtype", a->dtype,
                  "f32, or bf16 / f16: conv and dense layers in that type where the target has "
                  "kernels for it (softmax, normalisations and reductions stay f32); int8: "
                  "quantized first (as kiln quantize), calibrated on --calibration")
      ->capture_default_str();
  cmd->add_option("--calibration", a->calibration,
                  "With --dtype int8 or --max-error: a folder of .npy files, each one sample of "
                  "the model's input");
  cmd->add_option("--max-error", a->max_error,
                  "With --records: of the layers they time faster in bf16/f16 or int8, keep as "
                  "many as hold each output's relative RMS error against the precise model "
                  "(f32, float paths) within E on the --calibration samples; the rest run "
                  "precise");
  cmd->add_option("--keep-float", a->keep_float,
                  "With --dtype int8: Conv/MatMul/Gemm nodes (by name, or output name) to leave "
                  "in float");
  cmd->add_option("--percentile", a->percentile,
                  "With --dtype int8: activation ranges from their (100 - P)th and P-th "
                  "percentiles (e.g. 99.99) rather than their min and max");
  cmd->add_flag("--entropy", a->entropy,
                "With --dtype int8: activation ranges that lose least information (least KL "
                "divergence)");
  add_keep_last_flag(*cmd, a->keep_last_f32);
  return [a] { return run_compile(*a); };
}

}  // namespace kiln::tools
