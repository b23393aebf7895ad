// Folding inference-mode BatchNormalization into the Conv that feeds it: with
// s = scale / sqrt(var + eps), the Conv's weights become W * s (per output channel) and its
// bias (b - mean) * s + beta, and the BatchNormalization node disappears. Done when the Conv's
// weights (and bias, if any) are constants and the BatchNormalization is the Conv output's only
// reader; any other BatchNormalization stays and becomes a batch_norm kernel.
#pragma once

#include "compiler/graph/graph.h"

namespace kiln::network {

// Returns the number of BatchNormalization nodes folded.
int fold_batch_norm(graph::Graph& graph);

}  // namespace kiln::network
