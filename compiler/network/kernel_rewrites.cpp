#include "compiler/network/kernel_rewrites.h"

#include <cstdlib>
#include <iostream>

#include "compiler/graph/passes/pipeline.h"
#include "compiler/graph/printer.h"
#include "compiler/network/constant_outputs.h"
#include "compiler/network/decompose_ops.h"
#include "compiler/network/explicit_pads.h"
#include "compiler/network/fuse_attention.h"
#include "compiler/network/fuse_gelu.h"
#include "compiler/network/fuse_layer_norm.h"
#include "compiler/network/fuse_matmul_bias.h"
#include "compiler/network/fuse_self_gated.h"
#include "compiler/network/instance_norm_to_layer_norm.h"
#include "compiler/network/lift_1d_to_2d.h"
#include "compiler/network/prune_dead_taps.h"
#include "compiler/network/scale_matmul_operand.h"
#include "compiler/network/split_to_slices.h"
#include "compiler/network/split_variadic.h"
#include "compiler/network/unroll_recurrent.h"
#include "compiler/network/where_to_arithmetic.h"

namespace kiln::network {

std::string RewriteCounts::str() const {
  return std::to_string(recurrences) + " LSTM/GRU/RNN unrolled, " + std::to_string(decomposed) +
         " nodes decomposed, " + std::to_string(layer_norms) + " LayerNormalization, " +
         std::to_string(gelus) + " Gelu, " + std::to_string(self_gated) + " Silu/Mish/HardSwish, " +
         std::to_string(lifted_1d) + " 1-D nodes as 2-D, " + std::to_string(explicit_pads) +
         " auto_pad or asymmetric pads made explicit, " + std::to_string(matmul_biases) +
         " MatMul+bias fused, " + std::to_string(matmul_scalings) +
         " MatMul scalings moved to an operand, " + std::to_string(attentions) +
         " attentions fused, " + std::to_string(splits) + " Split sliced, " +
         std::to_string(variadic) + " Max/Min split into binary nodes, " +
         std::to_string(instance_norms) + " InstanceNormalization as LayerNormalization, " +
         std::to_string(wheres) + " Where as arithmetic, " + std::to_string(pruned_convs) +
         " Conv kernels cut to their live taps, " + std::to_string(constant_outputs) +
         " constant outputs copied";
}

RewriteCounts rewrite_for_kernels(graph::Graph& graph) {
  RewriteCounts c;
  c.recurrences = unroll_recurrent(graph);
  c.decomposed = decompose_ops(graph);
  // Types for the new values; folding turns the steps on zero initial states into constants.
  if (c.recurrences + c.decomposed > 0) graph::run_graph_passes(graph);
  c.splits = split_to_slices(graph);
  c.variadic = split_variadic(graph);
  c.instance_norms = instance_norm_to_layer_norm(graph);
  c.wheres = where_to_arithmetic(graph);
  c.layer_norms = fuse_layer_norm(graph);
  c.gelus = fuse_gelu(graph);
  c.self_gated = fuse_self_gated(graph);
  c.lifted_1d = lift_1d_to_2d(graph);  // before the Conv passes below see the 2-D Conv
  c.explicit_pads = explicit_pads(graph);
  c.pruned_convs = prune_dead_taps(graph);
  // Pruning a conv on a small map can leave its pads asymmetric (SSDlite's extra layers: a
  // 3x3 stride-2 conv over 2x2 keeps the taps that read row 0 and 1 only).
  if (c.pruned_convs > 0) c.explicit_pads += explicit_pads(graph);
  c.matmul_scalings = scale_matmul_operand(graph);
  c.attentions = fuse_attention(graph);  // after the scaling of its scores moved onto Q
  // After GELU: its input is often a Linear's output, read by two nodes until then.
  c.matmul_biases = fuse_matmul_bias(graph);
  c.constant_outputs = copy_constant_outputs(graph);
  if (std::getenv("KILN_DUMP_GRAPH")) std::cerr << "// after rewrite_for_kernels\n" << graph;
  return c;
}

}  // namespace kiln::network
