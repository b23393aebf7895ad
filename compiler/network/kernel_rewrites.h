// The graph rewrites that put an imported network into the forms the operator library has
// kernels for, before batch-norm folding and epilogue fusion: LSTM/GRU/RNN unrolled, operators
// without a kernel of their own decomposed (decompose_ops.h), Split into Slices, variadic
// Max/Min into binary nodes,
// InstanceNormalization into LayerNormalization + scale + bias, Where of a constant mask
// into arithmetic, and the written-out patterns of layer normalisation, GELU and Linear
// (MatMul + bias) into single nodes. Each is its own pass file; this runs them in order.
#pragma once

#include <string>

#include "compiler/graph/graph.h"

namespace kiln::network {

struct RewriteCounts {
  int recurrences = 0, decomposed = 0, splits = 0, variadic = 0, instance_norms = 0, wheres = 0,
      layer_norms = 0, gelus = 0, self_gated = 0, lifted_1d = 0, explicit_pads = 0,
      matmul_biases = 0, matmul_scalings = 0, attentions = 0, pruned_convs = 0,
      constant_outputs = 0;
  std::string str() const;  // "2 LayerNormalization, 1 Gelu, 3 MatMul+bias fused, ..."
};

RewriteCounts rewrite_for_kernels(graph::Graph& graph);

}  // namespace kiln::network
