// The graph pass pipeline: pipeline.cpp lists every pass in order with the reason it sits
// where it does. `after_pass` (or KILN_DUMP_GRAPH=1 in the environment, printing to stderr)
// shows the graph after each one; the verifier runs between passes.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "compiler/graph/graph.h"

namespace kiln::graph {

struct GraphPassOptions {
  std::function<void(const std::string& pass, const Graph& graph)> after_pass;
};

// Runs the passes on a graph whose inputs are bound (bind_input_shapes).
void run_graph_passes(Graph& graph, const GraphPassOptions& options = {});

// The pass names in order.
const std::vector<std::string>& graph_pass_names();

}  // namespace kiln::graph
