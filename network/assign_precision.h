// The precision pass (`kiln compile/tune --dtype bf16|f16`): which kernels of a network run in
// half precision, and the casts at the edges of those regions.
//
// Convolutions (groups 1) and dense layers (Gemm, MatMul of a constant 2-D weight) run in the
// half type where the target has kernels made for it (conv2d.bf16.x86, dense.f16.arm...: a
// template that does not compute f32), and depthwise convolutions too on such a target
// (conv2d.depthwise loads and stores the half type, which is what a memory-bound layer gains
// from). Everything else stays f32: softmax, normalisations, reductions, pooling, elementwise
// ops, grouped convolutions. With `keep_last_f32` (the default: mixed-precision recipes usually
// keep the classifier in full precision) the last conv/dense layers, those whose result reaches
// a graph output through no other conv/dense, stay f32 as well: the logits are what a user
// compares, and the last layer is a small part of the time.
//
// The half kernels accumulate in f32; what is rounded is their inputs and, inside a region,
// the activations between them. In the graph: a half node's data input (and a fused residual)
// has the half type; its output has the half type when every reader is a half node, else f32
// (the kernel writes f32 itself: its `out_f32` form). A Cast node converts each f32 value a half
// node reads, once, so a chain of half convolutions has no cast inside it and the only casts
// are where a region starts. Weights stay f32 constants here: lower_network packs them into
// the kernel's layout and type at compile time.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "compiler/graph/graph.h"
#include "compiler/target/target.h"
#include "network/int8_choice.h"

namespace kiln::network {

// How the reason starts for a layer --max-error keeps in its precise form (error_budget.h).
inline constexpr const char* kKeptPreciseByBudget = "kept precise by --max-error";

struct PrecisionOptions {
  ir::DataType dtype = ir::DataType::f32();  // f32: the pass changes nothing
  bool keep_last_f32 = true;
  // Which quantized convs run on their int8 kernel (the rule, forced, or measured).
  Int8Paths int8;
  // Conv/dense layers (node_key) the records time faster in f32 than in `dtype`, with why
  // (half_paths.h): they stay f32.
  std::map<std::string, std::string> half_measured_f32;
  // `kiln tune --precisions f32,bf16`: extract_tasks takes the kernels of both the `dtype`
  // network and the f32 one.
  bool half_and_f32 = false;
};

struct PrecisionCounts {
  int half_nodes = 0;   // conv/dense nodes that run in the half type
  int kept_f32 = 0;     // conv/dense nodes left f32 (no half kernel, the last layers, a
                        // depthwise conv read by an f32 layer)
  int casts = 0;        // Cast nodes inserted
  int measured_f32 = 0;     // of kept_f32: those the records time faster in f32
  int budget_f32 = 0;       // of kept_f32: those --max-error keeps f32 (error_budget.h)
  std::string str() const;  // "12 conv/dense in bf16, 1 kept f32, 1 cast"
};

// UserError when `dtype` is not f32, f16 or bf16, or when `target` has no half kernel for it
// (naming the targets that do).
PrecisionCounts assign_precision(graph::Graph& graph, const Target& target,
                                 const PrecisionOptions& options);

// A Conv of one input channel per group, as many groups as output channels: it writes only its
// input's type, so it runs half only where every reader does.
bool is_depthwise_conv(const graph::Graph& g, const graph::Node& n);

// Whether `target` has a conv2d or dense kernel made for the half type `dtype`.
bool has_half_kernels(const Target& target, ir::DataType dtype);

// The target presets, then the CPU and board profiles, with a conv2d or dense kernel made for
// `dtype`, for messages.
std::vector<std::string> targets_with_half_kernels(ir::DataType dtype);

}  // namespace kiln::network
