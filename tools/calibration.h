// Calibration inputs for post-training quantization, shared by `kiln quantize` and
// `kiln compile --dtype int8`: a folder of .npy files, each one sample of a one-input model.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "compiler/graph/quantize_model.h"

namespace kiln::tools {

// One calibration set per .npy of `dir` (sorted by name), each for the model's input `input`.
// UserError naming `flag` when the folder is missing or holds no .npy file.
std::vector<std::map<std::string, graph::HostTensor>> calibration_sets(const std::string& dir,
                                                                       const std::string& input,
                                                                       const std::string& flag);

// The options of --keep-float, --percentile P (100: min-max) and --entropy; UserError when
// both range methods are asked for.
graph::QuantizeOptions quantize_options(const std::vector<std::string>& keep_float,
                                        double percentile, bool entropy);

// Quantizes the ONNX model `model_bytes` (read from `source`) into a QDQ model calibrated on the
// .npy files of `dir` with `options` (--keep-float, --percentile); the model must have one input.
// Prints what it quantized and the error it costs on the calibration inputs to stdout.
std::string quantize_with_report(const std::string& model_bytes, const std::string& source,
                                 const std::string& dir, const std::string& flag,
                                 const graph::QuantizeOptions& options);

}  // namespace kiln::tools
