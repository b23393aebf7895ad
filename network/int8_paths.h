// The measured choice between each quantized conv's int8 kernel and its float path
// (`kiln tune MODEL --precisions int8,f32` measures both, `kiln compile --records` picks).
//
// int8_choice.h's rule guesses from the target's instructions; here the records decide. The
// network is lowered twice with the records, once with every quantized conv on its int8
// kernel and once with every one on its float path, and each conv's two paths are costed
// from the records' times of the very kernels those programs call:
//   int8:  the int8 conv kernel (it reads and writes the 8-bit activations);
//   float: the f32 conv, the nodes up to its QuantizeLinear (unless fused into the conv), that
//          QuantizeLinear, and the DequantizeLinear of its input (shared equally among the
//          convs reading it): the quantize/dequantize at the edges of a float region.
// The float path wins when it is faster by more than kFloatPathMargin; otherwise int8 stays:
// two timings on a VM differ by several percent run to run, and an int8 conv also hands its
// neighbours 8-bit activations, a saving in their memory traffic that this sum does not see.
// A conv one of whose kernels has no record time keeps the rule's
// answer, and those kernels are listed so that the tune can measure them once.
//
// Accuracy is not traded here: both paths compute the quantized model (the int8 kernel its
// integer form, the float path ONNX's own float semantics of the QDQ graph), one quantum apart
// at most. Layout conversions around either path are not counted.
#pragma once

#include <string>
#include <vector>

#include "compiler/graph/bind.h"
#include "compiler/target/target.h"
#include "network/assign_precision.h"
#include "network/kernel_times.h"
#include "tuner/record.h"

namespace kiln::network {

inline constexpr double kFloatPathMargin = 0.05;

// How a reason for the float path that the records gave starts.
inline constexpr const char* kMeasuredSlower = "int8 slower here (measured)";

struct Int8PathTimes {
  std::string conv;                      // int8_conv_key
  std::vector<KernelToMeasure> kernels;  // of both paths
  double int8_s = 0;                     // its int8 kernel's time per call (0: not in the records)
  double float_s = 0;  // its float path, edges included (0: some kernel not in the records)
  double edges_s = 0;  // the quantize/dequantize part of float_s
  bool measured() const { return int8_s > 0 && float_s > 0; }
  bool keeps_float() const;
  // "int8 slower here (measured): int8 0.412 ms, float path 0.300 ms (0.031 quantize/...)"
  std::string reason() const;
};

struct Int8PathPlan {
  std::vector<Int8PathTimes> convs;         // the quantized convs with an int8 kernel
  std::vector<KernelToMeasure> unmeasured;  // those the records have no time for, each once
  // The kernels of both forms of the layers the times move to f32 (to be timed again).
  std::vector<KernelToMeasure> kernels_moved_to_f32() const;
  // The measured answers, for prepare_graph (PrecisionOptions::int8).
  Int8Paths paths() const;
};

// `precision`: the compile's own (--dtype); `records`: the logs' (their target's).
Int8PathPlan plan_int8_paths(const std::string& model_path, const graph::ShapeBindings& shapes,
                             const Target& target, const PrecisionOptions& precision,
                             const std::vector<tuner::TuningRecord>& records);

// A row per conv: both times and the form taken (the reports and model.json).
std::vector<TwoForms> two_forms(const Int8PathPlan& plan);
// One line for `kiln compile`'s report ("" when the model has no quantized conv).
std::string describe(const Int8PathPlan& plan);
// A row per conv: both times and the path taken, for `kiln tune`'s summary.
std::string format_table(const Int8PathPlan& plan);

}  // namespace kiln::network
