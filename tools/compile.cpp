// `kiln compile MODEL.onnx --target T [--records LOG...] [--pins PINS...] [--input-shape NAME=1,3,224,224 ...]
// [--dtype bf16|f16 [--no-keep-last-f32]] -o DIR`: an ONNX network to a model directory (network/compile_network.h).
#include <iostream>
#include <memory>

#include "compiler/base/output_paths.h"
#include "compiler/graph/bind.h"
#include "network/compile_network.h"
#include "tools/precision_args.h"
#include "tools/subcommands.h"

namespace kiln::tools {

namespace {

struct CompileArgs {
  std::string model, target = "host", out, name, dtype = "f32";
  bool keep_last_f32 = true;
  std::vector<std::string> records, pins, input_shapes;
};

int run_compile(const CompileArgs& a) {
  // A bad -o fails now, not after the compile (write_artifact checks it again at the end).
  check_replaceable_folder(a.out, "-o");
  network::CompileOptions o;
  o.model_path = a.model;
  o.target = target_from_name(a.target);
  o.record_logs = a.records;
  o.pin_logs = a.pins;
  o.out_dir = a.out;
  o.name = a.name;
  o.precision = precision_options(a.dtype, a.keep_last_f32);
  for (const std::string& spec : a.input_shapes) graph::add_shape_binding(o.input_shapes, spec);
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
  cmd->add_option("--records", a->records, "Tuning logs (apply-history-best); else fallback configs");
  cmd->add_option("--pins", a->pins,
                  "Pinned configs (kiln records pin): built for their workloads whatever --records "
                  "holds");
  cmd->add_option("--input-shape", a->input_shapes, "NAME=1,3,224,224 (an input) or SYMBOL=1");
  cmd->add_option("-o,--output", a->out, "Output directory")->required();
  cmd->add_option("--name", a->name,
                  "The model's name (model.h declares kiln_model_NAME); default: the file's stem");
  cmd->add_option("--dtype", a->dtype,
                  "f32, or bf16 / f16: conv and dense layers in that type where the target has "
                  "kernels for it (softmax, normalisations and reductions stay f32)")
      ->capture_default_str();
  add_keep_last_flag(*cmd, a->keep_last_f32);
  return [a] { return run_compile(*a); };
}

}  // namespace kiln::tools
