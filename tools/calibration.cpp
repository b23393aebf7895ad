// Calibration sets from .npy folders, and quantization with its report (tools/calibration.h).
#include "tools/calibration.h"

#include <algorithm>
#include <filesystem>
#include <iostream>

#include "compiler/base/error.h"
#include "compiler/graph/onnx_import.h"
#include "tools/npy_file.h"

namespace kiln::tools {

namespace fs = std::filesystem;

std::vector<std::map<std::string, graph::HostTensor>> calibration_sets(const std::string& dir,
                                                                       const std::string& input,
                                                                       const std::string& flag) {
  user_check(fs::is_directory(dir)) << flag << " " << dir << " is not a folder";
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".npy") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  user_check(!files.empty()) << flag << " " << dir << " has no .npy files";
  std::vector<std::map<std::string, graph::HostTensor>> sets;
  for (const std::string& f : files) {
    F32File x = read_f32_file(f);
    std::vector<double> v(x.values.begin(), x.values.end());
    sets.push_back({{input, graph::HostTensor::from_f64(graph::DataType::f32(), x.shape, v)}});
  }
  return sets;
}

graph::QuantizeOptions quantize_options(const std::vector<std::string>& keep_float,
                                        double percentile, bool entropy) {
  user_check(!(entropy && percentile != 100)) << "--percentile and --entropy: choose one";
  graph::QuantizeOptions o;
  o.keep_float = keep_float;
  if (entropy) o.ranges.method = graph::RangeMethod::kEntropy;
  if (percentile != 100) o.ranges = {graph::RangeMethod::kPercentile, percentile};
  return o;
}

std::string quantize_with_report(const std::string& model_bytes, const std::string& source,
                                 const std::string& dir, const std::string& flag,
                                 const graph::QuantizeOptions& options) {
  const graph::Graph g = graph::import_onnx_bytes(model_bytes, source);
  user_check(g.inputs.size() == 1) << source << ": has " << g.inputs.size()
                                   << " inputs; int8 calibration takes models of one input";
  graph::QuantizeReport r;
  std::string q = graph::quantize_model(model_bytes, source,
                                        calibration_sets(dir, g.inputs[0], flag), options, &r);
  std::cout << "quantized " << r.activations << " activations (uint8, per tensor, ";
  switch (options.ranges.method) {
    case graph::RangeMethod::kPercentile:
      std::cout << "the " << options.ranges.percentile << "th percentiles";
      break;
    case graph::RangeMethod::kEntropy:
      std::cout << "least entropy";
      break;
    case graph::RangeMethod::kMinMax:
      std::cout << "min-max";
  }
  std::cout << ") and " << r.weights << " weights (int8, per channel)";
  for (const std::string& k : r.kept_float) std::cout << "; kept in float: " << k;
  std::cout << "\nerror against the float model on the calibration inputs:\n";
  for (const graph::QuantizeError& e : r.outputs)
    std::cout << "  output " << e.name << ": max |diff| " << e.max_abs << ", relative rms "
              << e.relative_rms << "\n";
  std::cout << "activations furthest from float (relative rms):\n";
  for (const graph::QuantizeError& e : r.worst_layers)
    std::cout << "  " << e.name << ": " << e.relative_rms << "\n";
  return q;
}

}  // namespace kiln::tools
