#include "compiler/network/prepare_graph.h"

#include "compiler/graph/onnx_import.h"
#include "compiler/graph/passes/pipeline.h"
#include "compiler/network/fold_batch_norm.h"
#include "compiler/network/fuse_epilogues.h"
#include "compiler/network/kernel_rewrites.h"

namespace kiln::network {

PreparedGraph prepare_graph(const std::string& model_path, const graph::ShapeBindings& input_shapes) {
  PreparedGraph p;
  // The ONNX file in canonical form, its inputs given sizes, then the generic graph passes
  // (shape inference makes every value concrete, constant folding removes shape arithmetic).
  p.graph = graph::import_onnx_file(model_path);
  graph::bind_input_shapes(p.graph, input_shapes);
  graph::run_graph_passes(p.graph);
  rewrite_for_kernels(p.graph);  // Split, LayerNorm/GELU patterns, MatMul+bias: kernel-shaped nodes
  // BN folding before fusion: the folded Conv gets a bias, and its Relu can then fuse.
  p.bn_folded = fold_batch_norm(p.graph);
  p.epilogues_fused = fuse_epilogues(p.graph);
  return p;
}

}  // namespace kiln::network
