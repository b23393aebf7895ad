// The reference evaluator: runs a graph, or one node, on host tensors with each operator's
// plain implementation (ops/). It folds constants during compilation and is the oracle that
// compiled networks are checked against. Readable before fast; f32 math runs in double.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "compiler/graph/graph.h"

namespace kiln::graph {

// Runs the graph on `inputs` (one per graph input, matching its declared type) and returns
// every graph output by name. Values are freed after their last use. Where shape inference
// has run, each result is checked against its inferred type (a mismatch is a kiln bug).
std::map<std::string, HostTensor> evaluate(const Graph& graph,
                                           const std::map<std::string, HostTensor>& inputs);

// Runs one node (and its fused epilogue); `value_of` returns the tensor of a value name.
// Returns one tensor per node output ("" outputs get an empty placeholder).
using ValueLookup = std::function<const HostTensor*(const std::string&)>;
std::vector<HostTensor> evaluate_node(const Graph& graph, const Node& node,
                                      const ValueLookup& value_of);

}  // namespace kiln::graph
