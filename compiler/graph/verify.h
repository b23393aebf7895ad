// The graph IR's invariants, checked between passes: every value defined once, every node
// after the producers of its inputs, graph outputs defined, and (once shapes are inferred)
// a concrete type for every value. A violation is a kiln bug (InternalError) naming the pass
// that left it, except where the input model itself is at fault (UserError at import).
#pragma once

#include <string>

#include "compiler/graph/graph.h"

namespace kiln::graph {

// `after` names the step that produced the graph, for the message.
void verify_graph(const Graph& graph, const std::string& after, bool types_inferred = false);

}  // namespace kiln::graph
