#include "network/prepare_graph.h"

#include <cstdlib>
#include <iostream>

#include "compiler/graph/onnx_import.h"
#include "compiler/graph/passes/pipeline.h"
#include "compiler/graph/printer.h"
#include "compiler/graph/rewrites/rewrites.h"
#include "network/fold_batch_norm.h"
#include "network/fuse_epilogues.h"
#include "network/int8_choice.h"
#include "network/split_padded_conv.h"
#include "schedules/attention/attention.h"
#include "schedules/conv2d/int8.h"
#include "schedules/data_movement/data_movement.h"

namespace kiln::network {

PreparedGraph prepare_graph(const std::string& model_path, const graph::ShapeBindings& input_shapes) {
  return prepare_graph(model_path, input_shapes, Target{}, PrecisionOptions{});
}

PreparedGraph prepare_graph(const std::string& model_path, const graph::ShapeBindings& input_shapes,
                            const Target& target, const PrecisionOptions& precision) {
  PreparedGraph p;
  // KILN_DUMP_GRAPH=1 prints the graph after each step, as the generic pipeline does.
  const bool dump = std::getenv("KILN_DUMP_GRAPH") != nullptr;
  auto after = [&](const char* step) {
    if (dump) std::cerr << "// after " << step << "\n" << p.graph;
  };
  // The ONNX file in canonical form, its inputs given sizes, then the generic graph passes
  // (shape inference makes every value concrete, constant folding removes shape arithmetic).
  p.graph = graph::import_onnx_file(model_path);
  graph::bind_input_shapes(p.graph, input_shapes);
  graph::run_graph_passes(p.graph);
  // Split, LayerNorm/GELU patterns, attention, MatMul+bias: kernel-shaped nodes, within the
  // limits of the kernels they will map to.
  graph::RewriteOptions rewrite;
  rewrite.max_concat_inputs = schedules::kMaxConcatInputs;
  rewrite.attention_max_keys = schedules::kAttentionMaxKeys;
  rewrite.int8_conv_depthwise = schedules::kInt8DepthwiseConv;
  rewrite.int8_conv_keep_float = [&](graph::Graph& g, const graph::Node& conv) {
    ++p.int8_convs;
    std::string reason = int8_path_reason(g, conv, target, precision.int8);
    if (!reason.empty()) p.int8_kept_float.push_back({int8_conv_key(conv), reason});
    return reason;
  };
  graph::run_rewrites(p.graph, rewrite);
  // BN folding before fusion: the folded Conv gets a bias, and its Relu can then fuse.
  p.bn_folded = fold_batch_norm(p.graph);
  after("fold_batch_norm");
  p.bn_scale_shifts = batch_norms_to_scale_shifts(p.graph);
  after("batch_norms_to_scale_shifts");
  p.epilogues_fused = fuse_epilogues(p.graph);
  after("fuse_epilogues");
  // After fusion: each region of a split conv takes its bias and activation.
  p.convs_split = split_padded_convs(p.graph);
  after("split_padded_convs");
  // Last: the precision of each conv/dense is decided on the kernels as they will be built
  // (epilogues fused), and the casts go between those kernels.
  if (precision.dtype != ir::DataType::f32()) {
    p.precision = assign_precision(p.graph, target, precision);
    after("assign_precision");
  }
  return p;
}

}  // namespace kiln::network
