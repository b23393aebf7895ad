// `kiln quantize MODEL.onnx --calibration DIR -o MODEL.int8.onnx [--keep-float NODE...]
// [--input-shape ...]`: post-training static quantization into a QDQ model
// (compiler/graph/quantize_model.h), calibrated on the .npy files of DIR (one sample of the
// model's input each), written atomically, with the error it costs on those inputs.
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include "compiler/base/error.h"
#include "compiler/base/output_paths.h"
#include "tools/calibration.h"
#include "tools/subcommands.h"
#include "tools/write_file.h"

namespace kiln::tools {

namespace {

struct QuantizeArgs {
  std::string model, calibration, out;
  std::vector<std::string> keep_float;
  double percentile = 100;
  bool entropy = false;
};

int run_quantize(const QuantizeArgs& a) {
  check_output_file(a.out, "-o");  // before the calibration, not after
  std::ifstream in(a.model, std::ios::binary);
  user_check(in.good()) << a.model << ": cannot read";
  std::stringstream bytes;
  bytes << in.rdbuf();
  const std::string q = quantize_with_report(bytes.str(), a.model, a.calibration, "--calibration",
                                             quantize_options(a.keep_float, a.percentile, a.entropy));
  write_file_atomically(a.out, q);
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
  cmd->add_option("--percentile", a->percentile,
                  "Activation ranges from the values between the (100 - P)th and the P-th "
                  "percentile (e.g. 99.99) rather than their min and max")
      ->capture_default_str();
  cmd->add_flag("--entropy", a->entropy,
                "Activation ranges that lose least information (least KL divergence, as TensorRT "
                "calibrates) rather than their min and max");
  return [a] { return run_quantize(*a); };
}

}  // namespace kiln::tools
