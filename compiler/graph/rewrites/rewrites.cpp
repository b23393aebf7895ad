#include "compiler/graph/rewrites/rewrites.h"

#include <cstdlib>
#include <iostream>

#include "compiler/base/error.h"
#include "compiler/graph/passes/pipeline.h"
#include "compiler/graph/printer.h"
#include "compiler/graph/rewrites/constant_outputs.h"
#include "compiler/graph/rewrites/decompose_ops.h"
#include "compiler/graph/rewrites/explicit_pads.h"
#include "compiler/graph/rewrites/fuse_attention.h"
#include "compiler/graph/rewrites/fuse_channel_shuffle.h"
#include "compiler/graph/rewrites/fuse_gelu.h"
#include "compiler/graph/rewrites/fuse_layer_norm.h"
#include "compiler/graph/rewrites/fuse_matmul_bias.h"
#include "compiler/graph/rewrites/fuse_self_gated.h"
#include "compiler/graph/rewrites/instance_norm_to_layer_norm.h"
#include "compiler/graph/rewrites/lift_1d_to_2d.h"
#include "compiler/graph/rewrites/prune_dead_taps.h"
#include "compiler/graph/rewrites/quantize_dequantize.h"
#include "compiler/graph/rewrites/quantized_contrib.h"
#include "compiler/graph/rewrites/quantized_elementwise.h"
#include "compiler/graph/rewrites/quantized_operators.h"
#include "compiler/graph/rewrites/scale_matmul_operand.h"
#include "compiler/graph/rewrites/split_to_slices.h"
#include "compiler/graph/rewrites/split_variadic.h"
#include "compiler/graph/rewrites/unroll_recurrent.h"
#include "compiler/graph/rewrites/where_to_arithmetic.h"
#include "compiler/graph/verify.h"

namespace kiln::graph {

namespace {

// The values the rows above left without a shape (new nodes' outputs) get theirs, and
// subgraphs that became constant (an LSTM step on its zero initial state) fold.
int infer_new_types(Graph& g, const RewriteOptions&) {
  for (const auto& [name, type] : g.types)
    if (!type.shape) {
      run_graph_passes(g);
      return 1;
    }
  return 0;
}

template <int (*F)(Graph&)>
int plain(Graph& g, const RewriteOptions&) {
  return F(g);
}

}  // namespace

const std::vector<GraphRewrite>& graph_rewrites() {
  static const std::vector<GraphRewrite> table = {
      {"unroll_recurrent",
       "LSTM, GRU and RNN unrolled over their time steps into MatMul, "
       "elementwise and Slice/Concat nodes",
       "no recurrent node",
       [](Graph& g, const RewriteOptions& o) { return unroll_recurrent(g, o.max_concat_inputs); }},
      {"quantized_contrib",
       "ONNX Runtime's com.microsoft quantized operators (QLinearMul, "
       "QLinearSigmoid, QLinearGlobalAveragePool, QLinearConcat, QGemm, ...) as the float "
       "operator between DequantizeLinear and QuantizeLinear that each stands for",
       "no com.microsoft quantized operator but a QLinearAdd of one shape and a QGemm of int8 "
       "weights (they have kernels)",
       [](Graph& g, const RewriteOptions& o) {
         const int sites = expand_quantized_contrib(g, o.max_concat_inputs);
         if (sites > 0) run_graph_passes(g);  // types for the rows below (decompose_ops reads them)
         return sites;
       }},
      {"quantized_operators",
       "DequantizeLinear -> Conv / MatMul -> QuantizeLinear over 8-bit "
       "data and int8 weights as one QLinearConv / QLinearMatMul (the int8 kernels' limits); "
       "the other dequantized weights folded to f32 constants",
       "no DequantizeLinear of constant weights",
       [](Graph& g, const RewriteOptions& o) {
         return fuse_quantized_operators(g, o.int8_conv_depthwise, o.int8_conv_keep_float);
       }},
      {"quantized_elementwise",
       "DequantizeLinear -> MaxPool or a copy (Flatten, Reshape, ...) -> QuantizeLinear of one "
       "quantization as that op on the 8-bit values, and DequantizeLinear (a, b) -> Add "
       "[-> Relu] -> QuantizeLinear as one QLinearAdd (rounded as ONNX Runtime's kernel rounds "
       "it)",
       "no per-tensor 8-bit Dequantize-select-Quantize or same-shape Dequantize-Add-Quantize "
       "chain",
       plain<fuse_quantized_elementwise>},
      {"quantize_dequantize",
       "a 16-bit quantized activation, DequantizeLinear(QuantizeLinear(x)) "
       "with one constant scale and zero point, as the exact float steps Div, Round, Add, Clip, "
       "Sub, Mul (8-bit pairs run on the quantize and dequantize kernels)",
       "no per-tensor 16-bit Quantize-Dequantize pair of an f32 value",
       plain<decompose_quantize_dequantize>},
      {"decompose_ops",
       "operators without a kernel of their own written exactly in ones that "
       "have one (LogSoftmax, Einsum, GatherND with constant indices, ...)",
       "every node's op type has a kernel mapping",
       [](Graph& g, const RewriteOptions& o) { return decompose_ops(g, o.max_concat_inputs); }},
      {"infer_new_types",
       "shape inference and constant folding over the values the rows above "
       "added",
       "every value has its type and shape; constant subgraphs are folded", infer_new_types},
      {"split_to_slices", "Split as one Slice per output", "no Split node", plain<split_to_slices>},
      {"split_variadic", "Max and Min of more than two inputs as a chain of binary nodes",
       "every Max and Min has two inputs", plain<split_variadic>},
      {"fuse_channel_shuffle",
       "Reshape [N, g, C/g, ...] -> Transpose (0, 2, 1, ...) -> Reshape back as one "
       "ChannelShuffle, with the channel Concat before it when nothing else reads that",
       "channel shuffles are single nodes", plain<fuse_channel_shuffle>},
      {"instance_norm_to_layer_norm",
       "InstanceNormalization as LayerNormalization over each "
       "channel's plane, then its scale and bias",
       "no InstanceNormalization", plain<instance_norm_to_layer_norm>},
      {"where_to_arithmetic",
       "Where of a constant condition (attention masks baked in as -inf or "
       "-1e9) as exact elementwise arithmetic",
       "every Where left has a computed condition", plain<where_to_arithmetic>},
      {"fuse_layer_norm",
       "the written-out mean / variance / normalise pattern as one "
       "LayerNormalization",
       "layer norms are single nodes", plain<fuse_layer_norm>},
      {"fuse_gelu", "the erf and tanh forms of GELU as one Gelu node", "GELUs are single nodes",
       plain<fuse_gelu>},
      {"fuse_self_gated",
       "x * Sigmoid(x), x * Tanh(Softplus(x)), x * HardSigmoid(x) as Silu, "
       "Mish, HardSwish",
       "self-gated activations are single nodes", plain<fuse_self_gated>},
      {"lift_1d_to_2d",
       "1-D Conv, ConvTranspose, pools and BatchNorm as the 2-D ones over a "
       "height-1 map",
       "every conv and pool is 2-D", plain<lift_1d_to_2d>},
      {"explicit_pads",
       "auto_pad as explicit pads; the part of asymmetric pads that one side "
       "has more of as a Pad node before the conv or pool",
       "conv and pool pads are explicit "
       "and the same on both sides of each axis (AveragePool without padding counted and "
       "ConvTranspose excepted)",
       plain<explicit_pads>},
      {"prune_dead_taps",
       "Conv kernels cut to the taps that ever read the input (a 3x3 over a "
       "1x1 map is a 1x1)",
       "no conv tap reads only padding", plain<prune_dead_taps>},
      {"explicit_pads_after_pruning",
       "pads made explicit again where pruning left them "
       "asymmetric (SSDlite's 3x3 stride-2 convs over 2x2 maps)",
       "as explicit_pads", plain<explicit_pads>},
      {"scale_matmul_operand",
       "Mul or Div of a MatMul's product by a constant moved onto its "
       "smaller operand (attention's Q K^T / sqrt(d))",
       "no scaling of a MatMul product", plain<scale_matmul_operand>},
      {"fuse_attention", "MatMul [+ mask] -> Softmax -> MatMul as one Attention node",
       "attention whose scores have no other reader is one node",
       [](Graph& g, const RewriteOptions& o) { return fuse_attention(g, o.attention_max_keys); }},
      {"fuse_matmul_bias",
       "MatMul followed by the Add of a constant bias as one MatMul with a "
       "bias (after GELU, whose input is often a Linear's output)",
       "linear layers are single "
       "nodes",
       plain<fuse_matmul_bias>},
      {"copy_constant_outputs",
       "a graph output that is a constant once shapes are bound, "
       "copied into its buffer by an Identity",
       "every graph output is computed by a node", plain<copy_constant_outputs>},
  };
  return table;
}

const GraphRewrite& graph_rewrite(const std::string& name) {
  const GraphRewrite* found = nullptr;
  for (const GraphRewrite& r : graph_rewrites())
    if (name == r.name) found = &r;
  internal_check(found != nullptr) << "no graph rewrite named '" << name << "'";
  return *found;
}

std::vector<RewriteCount> run_rewrites(Graph& graph, const RewriteOptions& options) {
  const bool verify = options.verify || std::getenv("KILN_VERIFY_GRAPH") != nullptr;
  const bool dump = std::getenv("KILN_DUMP_GRAPH") != nullptr;
  std::vector<RewriteCount> counts;
  for (const GraphRewrite& r : graph_rewrites()) {
    counts.push_back({r.name, r.run(graph, options)});
    if (verify) verify_graph(graph, std::string("graph rewrite ") + r.name);
    if (dump) std::cerr << "// after graph rewrite " << r.name << "\n" << graph;
  }
  return counts;
}

std::string rewrite_summary(const std::vector<RewriteCount>& counts) {
  std::string s;
  for (const RewriteCount& c : counts)
    if (c.sites > 0) s += (s.empty() ? "" : ", ") + std::to_string(c.sites) + " " + c.name;
  return s.empty() ? "no graph rewrite applied" : s;
}

}  // namespace kiln::graph
