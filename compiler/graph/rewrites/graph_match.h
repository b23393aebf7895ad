// Small queries the pattern-rewriting passes share: who produces or reads a value, whether a
// value is a scalar constant, and removing the nodes a rewrite made unnecessary.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "compiler/graph/graph.h"

namespace kiln::graph {

// The node that defines `value`, or nullptr (an input, a constant or "").
const graph::Node* producer_node(const graph::Graph& graph, const std::string& value);
// The node with op type `op` that defines `value`, or nullptr.
const graph::Node* producer_op(const graph::Graph& graph, const std::string& value,
                               const std::string& op);
// The nodes that read `value` (as a node input or an epilogue operand).
std::vector<const graph::Node*> readers(const graph::Graph& graph, const std::string& value);
// The one reader of `value` when it has exactly one and is not a graph output, else nullptr.
const graph::Node* only_reader(const graph::Graph& graph, const std::string& value);
// Whether `value` is a constant of one element within `tolerance` (relative) of `expected`.
bool is_scalar(const graph::Graph& graph, const std::string& value, double expected,
               double tolerance = 1e-6);
// The operand of a two-input node other than `value`, or "" when `value` is not an input.
std::string other_input(const graph::Node& node, const std::string& value);
// Removes the nodes whose first outputs are in `values` (keeping the others' order).
void erase_nodes_defining(graph::Graph& graph, const std::set<std::string>& values);
// A matched pattern collapsed into one node: `fused` (its op type, inputs and attributes)
// takes the place, name and source position of the node that writes `out`, and the nodes
// defining the pattern's `interior` values are removed.
void replace_pattern(graph::Graph& graph, const std::string& out, graph::Node fused,
                     const std::set<std::string>& interior);

}  // namespace kiln::graph
