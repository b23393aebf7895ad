// Constant folding: every node whose inputs are all constants (initializers), and every
// Shape/Size of a value with a known shape, is evaluated by the reference evaluator and
// replaced by initializers holding its outputs. One pass in topological order folds whole
// chains (Shape -> Gather -> Unsqueeze -> Concat -> Reshape's shape input). Dequantized
// 8-bit weights stay (graph/ops/quantize.h: is_quantized_weight): the quantized-operator
// rewrite reads their integers, and folds those it leaves.
#pragma once

#include "compiler/graph/graph.h"

namespace kiln::graph {

// Returns the number of nodes folded.
int fold_constants(Graph& graph);

}  // namespace kiln::graph
