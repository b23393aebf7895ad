// A ranged batch (`kiln compile --range batch=1..16`): one artifact that runs any batch in the
// range exactly. The network is compiled for one sample, and the runtime runs a batch of b as
// b runs of that program, each on the next slice along axis 0 of the batched inputs and of the
// outputs (kiln/model.h). That is exact only when the network computes every sample on its
// own, which compiler/graph/batch_separable.h proves on the graph before anything is built.
#pragma once

#include <string>
#include <vector>

#include "compiler/graph/bind.h"

namespace kiln::network {

struct BatchRange {
  std::string symbol;
  int64_t min = 0, max = 0;
  std::vector<bool> batched_inputs;  // per graph input: sliced along axis 0, or shared
};

// Checks that `range` names a batch: its symbol appears in the model's inputs, only as their
// axis 0, is not also bound by `bindings`, and the network computes each sample independently.
// UserError naming what is wrong otherwise (the dimension and input, or the node that mixes
// samples). `bindings` are the other --input-shape sizes.
BatchRange plan_batch_range(const std::string& model_path, const graph::ShapeBindings& bindings,
                            const graph::DimRange& range);

}  // namespace kiln::network
