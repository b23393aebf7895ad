// Ranged batch (`--range batch=1..16`): kiln compiles a network once at batch 1 and runs a
// batch of b samples as b runs of that program, one per contiguous slice along axis 0 of
// every input and output. That is right only when the network computes every sample on its
// own; this analysis proves it or says which node mixes samples.
//
// It compares the graph compiled at two batch sizes (2 and 3, not 1, so that no pass treats
// a batch of one specially). A value is *batched* when its shapes differ only in axis 0, as
// 2k and 3k rows (k >= 1): each sample is then one contiguous block of the row-major
// tensor, k rows. A value with the same shape in both is *unbatched*, shared by every
// sample. Every node that reads a batched value must keep samples apart by the rule of its
// operator (a table in batch_separable.cpp); operators not in the table are refused.
#pragma once

#include <string>
#include <vector>

#include "compiler/graph/graph.h"

namespace kiln::graph {

// `at2` and `at3`: the same ONNX graph imported twice, `symbol` bound to 2 and to 3
// (bind_input_shapes), each after run_graph_passes (shapes concrete, shape arithmetic
// folded). Returns, per graph input in at2.inputs order, whether it carries the batch on
// axis 0 (an input without it is shared by every sample). Throws a one-line UserError,
// "cannot run a ranged batch sample by sample: <node> <reason>", for the first node that
// mixes samples, a constant folded from the batch size that is not the same for every
// sample, a graph output without the batch on axis 0, or graphs whose structure differs.
std::vector<bool> check_batch_separable(const Graph& at2, const Graph& at3,
                                        const std::string& symbol);

}  // namespace kiln::graph
