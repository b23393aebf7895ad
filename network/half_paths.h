// The measured choice between running each conv/dense layer in a half type and in f32
// (`kiln tune MODEL --precisions f32,bf16` measures both, `kiln compile --dtype bf16 --records`
// picks), as int8_paths.h does for a quantized model's convs.
//
// assign_precision.h puts every layer that has a half kernel in the half type. Here the
// network is lowered twice with the records, with `--dtype` and in f32, and each layer the
// half network runs in the half type is costed both ways from the records' times of the very
// kernels those programs call:
//   half: its half kernel, and the casts to the half type of what it reads (a cast read by
//         several half layers shared equally among them);
//   f32:  its f32 kernel.
// The f32 kernel wins when it is faster by more than kF32Margin (two timings on a VM differ
// by several percent, and a half layer also hands half-size activations to its neighbours,
// which this sum does not see); the layer then stays f32 and the pass puts the casts around
// it. A layer one of whose kernels has no record time stays as the pass decides, and those
// kernels are listed so that the tune can measure them once.
//
// A depthwise conv writes only its input's type, so it runs half only when every layer that
// reads it does: it and its readers choose together, by the sums of their times.
//
// Accuracy: a layer kept in f32 is closer to the f32 model, never further.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "compiler/graph/bind.h"
#include "compiler/target/target.h"
#include "network/assign_precision.h"
#include "network/kernel_times.h"
#include "tuner/record.h"

namespace kiln::network {

inline constexpr double kF32Margin = 0.05;

// How a reason for keeping a layer f32 that the records gave starts.
inline constexpr const char* kHalfMeasuredSlower = "half slower here (measured)";

struct HalfPathTimes {
  std::string node;                      // node_key of the conv/dense layer
  std::vector<KernelToMeasure> kernels;  // of both forms
  double half_s = 0;   // its half kernel and the casts it reads (0: not all in the records)
  double f32_s = 0;    // its f32 kernel (0: not in the records)
  double casts_s = 0;  // the casts' part of half_s
  // A depthwise conv runs half only where every layer that reads it does (assign_precision.h),
  // so it and its readers are one group that chooses together, by the sums of their times
  // when all are timed. Alone: a group of 1.
  int group_size = 1;
  double group_half_s = 0, group_f32_s = 0;
  bool measured() const { return half_s > 0 && f32_s > 0; }
  bool keeps_f32() const {
    return group_size > 1 ? group_f32_s * (1 + kF32Margin) < group_half_s
                          : measured() && f32_s * (1 + kF32Margin) < half_s;
  }
  // "half slower here (measured): bf16 0.412 ms (0.031 of it casts), f32 0.300 ms"
  std::string reason(ir::DataType dtype) const;
};

struct HalfPathPlan {
  ir::DataType dtype = ir::DataType::f32();
  std::vector<HalfPathTimes> layers;        // those the `dtype` network runs in half
  std::vector<KernelToMeasure> unmeasured;  // those the records have no time for, each once
  // The kernels of both forms of the layers the times move to f32 (to be timed again).
  std::vector<KernelToMeasure> kernels_moved_to_f32() const;
  // The layers the records keep in f32, for PrecisionOptions::half_measured_f32.
  std::map<std::string, std::string> measured_f32() const;
};

// `precision`: the compile's own, its dtype a half type (else an empty plan).
HalfPathPlan plan_half_paths(const std::string& model_path, const graph::ShapeBindings& shapes,
                             const Target& target, const PrecisionOptions& precision,
                             const std::vector<tuner::TuningRecord>& records);

// A row per layer: both times and the form taken (the reports and model.json).
std::vector<TwoForms> two_forms(const HalfPathPlan& plan);
// One line for `kiln compile`'s report ("" when no layer runs in half).
std::string describe(const HalfPathPlan& plan);
// A row per layer: both times and the form taken, for `kiln tune`'s summary.
std::string format_table(const HalfPathPlan& plan);

}  // namespace kiln::network
