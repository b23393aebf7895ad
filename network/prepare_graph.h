// The graph passes that `kiln compile` and `kiln tune MODEL.onnx` both run before a graph
// becomes kernel calls: import the ONNX file, bind its input shapes, the generic graph passes,
// BatchNormalization folding, epilogue fusion and, for --dtype bf16|f16, the precision pass.
// Both commands call this one function so the workloads a network tune measures are exactly
// the ones a compile builds.
#pragma once

#include <string>
#include <vector>

#include "compiler/graph/bind.h"
#include "compiler/graph/graph.h"
#include "network/assign_precision.h"
#include "compiler/target/target.h"

namespace kiln::network {

// A quantized Conv left in float because its int8 kernel would be slower (int8_choice.h).
struct KeptFloat {
  std::string node;    // the Conv's name (its output's when it has none)
  std::string reason;  // "int8 slower here: ..."
};

struct PreparedGraph {
  graph::Graph graph;
  int bn_folded = 0, bn_scale_shifts = 0, epilogues_fused = 0;
  int convs_split = 0;  // split_padded_convs
  PrecisionCounts precision;
  std::vector<KeptFloat> int8_kept_float;
  int int8_convs = 0;  // quantized convs the int8 kernels were asked to take, kept float or not
};

// All in f32.
PreparedGraph prepare_graph(const std::string& model_path, const graph::ShapeBindings& input_shapes);
// With the precision pass for `target` (which kernels it has decides what runs in half).
PreparedGraph prepare_graph(const std::string& model_path, const graph::ShapeBindings& input_shapes,
                            const Target& target, const PrecisionOptions& precision);

}  // namespace kiln::network
