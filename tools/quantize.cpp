// `kiln quantize MODEL.onnx --calibration DIR -o MODEL.int8.onnx [--keep-float NODE...]
// [--input-shape ...]`: post-training static quantization into a QDQ model
// (compiler/graph/quantize_model.h), calibrated on the .npy files of DIR (one sample of the
// model's input each), written atomically, with the error it costs on those inputs.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include "compiler/base/error.h"
#include "compiler/base/output_paths.h"
#include "compiler/graph/onnx_import.h"
#include "compiler/graph/quantize_model.h"
#include "tools/npy_file.h"
#include "tools/subcommands.h"
#include "tools/write_file.h"

namespace kiln::tools {

namespace {

namespace fs = std::filesystem;

struct QuantizeArgs {
  std::string model, calibration, out;
  std::vector<std::string> keep_float;
};

// One calibration set per .npy of `dir` (sorted by name), each for the model's one input.
std::vector<std::map<std::string, graph::HostTensor>> calibration_sets(const std::string& dir,
                                                                       const std::string& input) {
  user_check(fs::is_directory(dir)) << "--calibration " << dir << " is not a folder";
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".npy") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  user_check(!files.empty()) << "--calibration " << dir << " has no .npy files";
  std::vector<std::map<std::string, graph::HostTensor>> sets;
  for (const std::string& f : files) {
    F32File x = read_f32_file(f);
    std::vector<double> v(x.values.begin(), x.values.end());
    sets.push_back({{input, graph::HostTensor::from_f64(graph::DataType::f32(), x.shape, v)}});
  }
  return sets;
}

int run_quantize(const QuantizeArgs& a) {
  check_output_file(a.out, "-o");  // before the calibration, not after
  std::ifstream in(a.model, std::ios::binary);
  user_check(in.good()) << a.model << ": cannot read";
  std::stringstream bytes;
  bytes << in.rdbuf();
  const graph::Graph g = graph::import_onnx_bytes(bytes.str(), a.model);
  user_check(g.inputs.size() == 1) << a.model << ": has " << g.inputs.size()
                                   << " inputs; kiln quantize calibrates models of one input";
  graph::QuantizeReport r;
  const std::string q = graph::quantize_model(
      bytes.str(), a.model, calibration_sets(a.calibration, g.inputs[0]), {a.keep_float}, &r);
  write_file_atomically(a.out, q);
  std::cout << "quantized " << r.activations << " activations (uint8, per tensor) and " << r.weights
            << " weights (int8, per channel)";
  for (const std::string& k : r.kept_float) std::cout << "; kept in float: " << k;
  std::cout << "\nerror against the float model on the calibration inputs:\n";
  for (const graph::QuantizeError& e : r.outputs)
    std::cout << "  output " << e.name << ": max |diff| " << e.max_abs << ", relative rms "
              << e.relative_rms << "\n";
  std::cout << "activations furthest from float (relative rms):\n";
  for (const graph::QuantizeError& e : r.worst_layers)
    std::cout << "  " << e.name << ": " << e.relative_rms << "\n";
  std::cout << "wrote " << a.out << "\n";
  return 0;
}

}  // namespace

Run add_quantize(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "quantize", "Quantize a float ONNX model to int8 (QDQ), calibrated on .npy inputs");
  auto a = std::make_shared<QuantizeArgs>();
  cmd->add_option("model", a->model, "The float .onnx file")->required();
  cmd->add_option("--calibration", a->calibration,
                  "A folder of .npy files, each one sample of the model's input")
      ->required();
  cmd->add_option("-o,--output", a->out, "The quantized .onnx file")->required();
  cmd->add_option("--keep-float", a->keep_float,
                  "Conv/MatMul/Gemm nodes (by name, or output name) to leave in float");
  return [a] { return run_quantize(*a); };
}

}  // namespace kiln::tools
