#include "compiler/graph/rewrites/constant_outputs.h"

namespace kiln::graph {

int copy_constant_outputs(graph::Graph& g) {
  int copied = 0;
  for (const std::string& out : g.outputs) {
    auto it = g.initializers.find(out);
    if (it == g.initializers.end()) continue;
    graph::HostTensor value = std::move(it->second);
    g.initializers.erase(it);
    const std::string held = g.add_constant(out + ".value", std::move(value));
    graph::Node copy;
    copy.op_type = "Identity";
    copy.name = out + ".copy";
    copy.inputs = {held};
    copy.outputs = {out};
    g.types[out] = *g.type_of(held);
    g.nodes.push_back(std::move(copy));
    ++copied;
  }
  return copied;
}

}  // namespace kiln::graph
