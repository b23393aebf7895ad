// InstanceNormalization (style transfer, some detection heads) becomes what kiln has kernels
// for: a LayerNormalization over the spatial axes (axis 2: per image and channel) with unit
// scale and zero bias, then the per-channel scale and bias as two broadcasting elementwise
// nodes.
#pragma once

#include "compiler/graph/graph.h"

namespace kiln::graph {

// Returns the number of InstanceNormalization nodes rewritten.
int instance_norm_to_layer_norm(graph::Graph& graph);

}  // namespace kiln::graph
