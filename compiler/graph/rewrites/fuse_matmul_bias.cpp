#include "compiler/graph/rewrites/fuse_matmul_bias.h"

#include "compiler/graph/rewrites/graph_match.h"

namespace kiln::graph {


namespace {

// The bias an Add contributes to `value` when it is a constant over the last axis.
std::string bias_of(const Graph& g, const Node& add, const std::string& value, int64_t cols) {
  if (add.op_type != "Add") return "";
  std::string b = other_input(add, value);
  if (b.empty() || !g.is_constant(b)) return "";
  const graph::HostTensor& t = g.initializers.at(b);
  // [N], [1, N], [1, 1, N]...: every leading extent 1.
  if (t.numel() != cols || (!t.shape().empty() && t.shape().back() != cols)) return "";
  return b;
}

}  // namespace

int fuse_matmul_bias(Graph& g) {
  int fused = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    Node& mm = g.nodes[i];
    if (mm.op_type != "MatMul" || mm.inputs.size() != 2 || !g.is_constant(mm.inputs[1]) ||
        !mm.epilogue.empty())
      continue;
    const graph::HostTensor& w = g.initializers.at(mm.inputs[1]);
    std::optional<graph::ValueType> a = g.type_of(mm.inputs[0]);
    if (w.shape().size() != 2 || !a || !a->is_concrete() || a->dims().size() < 2) continue;
    const Node* add = only_reader(g, mm.outputs[0]);
    if (!add) continue;
    std::string bias = bias_of(g, *add, mm.outputs[0], w.shape()[1]);
    if (bias.empty()) continue;
    // The fused node takes the Add's place (after everything both read).
    Node merged = mm;
    merged.inputs.push_back(bias);
    merged.outputs = add->outputs;
    size_t at = static_cast<size_t>(add - g.nodes.data());
    g.nodes[at] = std::move(merged);
    g.nodes.erase(g.nodes.begin() + static_cast<long>(i));
    --i;
    ++fused;
  }
  return fused;
}

}  // namespace kiln::graph
