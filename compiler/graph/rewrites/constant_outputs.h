// A graph output that is a constant once shapes are bound (DETR-style models return their
// reference points, a function of learned weights only) is copied into the output buffer by a
// kernel: the constant moves to a new name and an Identity, which the network compiler runs
// as a copy, writes the output's own name. An input returned as an output is still refused.
#pragma once

#include "compiler/graph/graph.h"

namespace kiln::graph {

// Returns the number of outputs given a copy.
int copy_constant_outputs(graph::Graph& graph);

}  // namespace kiln::graph
