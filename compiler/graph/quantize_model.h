// Post-training static quantization of a float ONNX model into the QDQ form (what ONNX
// Runtime's quantize_static writes, and what kiln compiles onto its int8 kernels):
//  - every activation a Conv, MatMul or Gemm reads, and each such operator's result (or the
//    result of the Relu that alone follows it), gets QuantizeLinear -> DequantizeLinear to
//    uint8 with the scale and zero point of its range over the calibration inputs (min-max,
//    percentiles or least entropy: calibrate_ranges.h), widened to include 0 so that 0.0 is
//    exact;
//  - their constant weights become int8 per output channel, symmetric (zero point 0, scale
//    max|w| / 127), read through a DequantizeLinear; a bias becomes int32 with the product
//    of the input and weight scales, as quantize_static writes it;
//  - operators named in `keep_float` (node names, or output names where a node has none) stay
//    as they are.
// The report compares the quantized model with the float one on the calibration inputs (the
// reference evaluator on both): each output's error, and the quantized activations whose
// dequantized values are furthest from the float ones (the layers that cost most accuracy).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "compiler/graph/calibrate_ranges.h"
#include "compiler/graph/graph.h"

namespace kiln::graph {

struct QuantizeOptions {
  std::vector<std::string> keep_float;
  RangeOptions ranges;  // how each activation's range is taken (min-max by default)
};

struct QuantizeError {
  std::string name;         // an output, or a quantized activation
  double max_abs = 0;       // the largest |quantized - float| over the calibration inputs
  double relative_rms = 0;  // rms(quantized - float) / rms(float)
};

struct QuantizeReport {
  int activations = 0, weights = 0;     // tensors given a Quantize-Dequantize pair / int8 weights
  std::vector<std::string> kept_float;  // quantizable operators left in float
  std::vector<QuantizeError> outputs;
  std::vector<QuantizeError> worst_layers;  // the five largest relative errors, worst first
};

// The quantized model (ONNX bytes) of `model_bytes` (named `source` in errors), calibrated on
// `calibration` (each a full set of graph inputs, shapes bound). UserError for a model with
// nothing to quantize, an empty calibration set, or an unknown name in keep_float.
std::string quantize_model(const std::string& model_bytes, const std::string& source,
                           const std::vector<std::map<std::string, HostTensor>>& calibration,
                           const QuantizeOptions& options, QuantizeReport* report);

}  // namespace kiln::graph
