#include "compiler/graph/passes/pipeline.h"

#include <cstdlib>
#include <iostream>

#include "compiler/graph/passes/eliminate_dead_nodes.h"
#include "compiler/graph/passes/fold_constants.h"
#include "compiler/graph/passes/infer_shapes.h"
#include "compiler/graph/passes/remove_identities.h"
#include "compiler/graph/printer.h"
#include "compiler/graph/verify.h"

namespace kiln::graph {

const std::vector<std::string>& graph_pass_names() {
  static const std::vector<std::string> kNames = {"infer_shapes", "fold_constants",
                                                  "eliminate_dead_nodes", "remove_identities"};
  return kNames;
}

void run_graph_passes(Graph& graph, const GraphPassOptions& options) {
  const bool dump = std::getenv("KILN_DUMP_GRAPH") != nullptr;
  auto step = [&](const char* pass, auto&& run) {
    run();
    verify_graph(graph, pass, true);
    if (dump) std::cerr << "// after " << pass << "\n" << graph;
    if (options.after_pass) options.after_pass(pass, graph);
  };
  // Concrete types for every value: everything after reads shapes. Needs bound inputs.
  step("infer_shapes", [&] { infer_shapes(graph); });
  // With shapes known, shape computations (Shape, Gather, Concat, ConstantOfShape, Range...)
  // and weight-only subgraphs become initializers.
  step("fold_constants", [&] { fold_constants(graph); });
  // Folding leaves producers of folded inputs and their initializers unread.
  step("eliminate_dead_nodes", [&] { eliminate_dead_nodes(graph); });
  // Last, so that the nodes it rewires are only those that compute something.
  step("remove_identities", [&] { remove_identities(graph); });
}

}  // namespace kiln::graph
