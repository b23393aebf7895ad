#include "compiler/network/fuse_silu.h"

#include "compiler/network/graph_match.h"

namespace kiln::network {

using graph::Graph;
using graph::Node;

int fuse_silu(Graph& g) {
  int fused = 0;
  for (bool changed = true; changed;) {
    changed = false;
    for (const Node& sigmoid : g.nodes) {
      if (sigmoid.op_type != "Sigmoid" || !sigmoid.epilogue.empty()) continue;
      const std::string& x = sigmoid.inputs[0];
      const std::string& s = sigmoid.outputs[0];
      // The Mul reading the sigmoid (its only reader) times the sigmoid's own input.
      const Node* mul = only_reader(g, s);
      if (!mul || mul->op_type != "Mul" || mul->inputs.size() != 2 || !mul->epilogue.empty() ||
          other_input(*mul, s) != x)
        continue;
      Node silu;
      silu.op_type = "Silu";
      silu.inputs = {x};
      replace_pattern(g, mul->outputs[0], std::move(silu), {s});
      ++fused;
      changed = true;
      break;
    }
  }
  return fused;
}

}  // namespace kiln::network
