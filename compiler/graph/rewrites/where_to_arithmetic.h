// Where with a constant condition (attention masks baked into a model: masked_fill of
// -inf or -1e9 before a softmax) becomes elementwise arithmetic the kernels run, exactly:
//   Where(c, k, y) with k = +-inf:   y + (c ? k : 0)
//   Where(c, k, y) with k finite:    y * (c ? 0 : 1) + (c ? k : 0)
//   Where(c, x, y) both computed:    x * c + y * (1 - c)
// (and the mirror forms with the constant on the false side). The finite forms propagate an
// infinite or NaN y through the product even where c selects k. A computed condition (a
// bool tensor) is left alone, and refused later like every non-f32 value.
#pragma once

#include "compiler/graph/graph.h"

namespace kiln::graph {

// Returns the number of Where nodes rewritten.
int where_to_arithmetic(graph::Graph& graph);

}  // namespace kiln::graph
