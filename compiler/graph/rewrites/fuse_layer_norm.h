// Recognises layer normalisation written out as exporters before opset 17 write it,
//   mean = ReduceMean(X, [-1]); d = X - mean; var = ReduceMean(d ^ 2 (or d * d), [-1]);
//   Y = d / Sqrt(var + eps) [* gamma] [+ beta]
// over the last axis, and replaces it with one LayerNormalization node, which runs as one
// layer_norm kernel (two passes over each row) instead of nine elementwise and reduce passes.
#pragma once

#include "compiler/graph/graph.h"

namespace kiln::graph {

// Returns the number of layer normalisations fused.
int fuse_layer_norm(graph::Graph& graph);

}  // namespace kiln::graph
