// The ranges post-training quantization gives its activations (quantize_model.h), from the
// values the reference evaluator computes on the calibration inputs. Three ways, as ONNX
// Runtime's and TensorRT's calibrators offer them:
//  - min-max: every value seen is inside the range;
//  - percentile p: the values between the (100 - p)th and the p-th percentile, so that a few
//    outliers do not stretch the scale of all the rest;
//  - entropy: the clipping threshold whose quantized distribution is closest to the observed
//    one (least Kullback-Leibler divergence, TensorRT's method), found on a histogram of |x|.
// The last two count the values into fixed histograms in a second pass over the calibration
// set, so memory does not grow with it.
#pragma once

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "compiler/graph/graph.h"

namespace kiln::graph {

enum class RangeMethod { kMinMax, kPercentile, kEntropy };

struct RangeOptions {
  RangeMethod method = RangeMethod::kMinMax;
  double percentile = 99.99;  // with kPercentile
};

// [lo, hi] of each of `values` (names of `g`, whose input shapes are bound) over the
// calibration sets.
std::map<std::string, std::pair<double, double>> calibrate_ranges(
    const Graph& g, const std::set<std::string>& values,
    const std::vector<std::map<std::string, HostTensor>>& calibration, const RangeOptions& options);

// The entropy method on one histogram: `hist` counts |x| in equal bins over [0, amax]; with
// `levels` quantization steps between 0 and the threshold (255 for a range that starts at 0,
// 127 for each side of a signed one). Returns the threshold.
double entropy_threshold(const std::vector<uint64_t>& hist, double amax, int levels);

}  // namespace kiln::graph
