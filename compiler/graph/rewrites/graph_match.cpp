#include "compiler/graph/rewrites/graph_match.h"

#include <algorithm>
#include <cmath>

namespace kiln::graph {


const Node* producer_node(const Graph& g, const std::string& value) {
  if (value.empty()) return nullptr;
  for (const Node& n : g.nodes)
    if (std::find(n.outputs.begin(), n.outputs.end(), value) != n.outputs.end()) return &n;
  return nullptr;
}

const Node* producer_op(const Graph& g, const std::string& value, const std::string& op) {
  const Node* n = producer_node(g, value);
  return n && n->op_type == op ? n : nullptr;
}

std::vector<const Node*> readers(const Graph& g, const std::string& value) {
  std::vector<const Node*> out;
  for (const Node& n : g.nodes) {
    bool reads = std::count(n.inputs.begin(), n.inputs.end(), value) > 0;
    for (const Node& e : n.epilogue)
      reads = reads || std::count(e.inputs.begin(), e.inputs.end(), value);
    if (reads) out.push_back(&n);
  }
  return out;
}

const Node* only_reader(const Graph& g, const std::string& value) {
  if (std::count(g.outputs.begin(), g.outputs.end(), value)) return nullptr;
  std::vector<const Node*> r = readers(g, value);
  if (r.size() != 1) return nullptr;
  return std::count(r[0]->inputs.begin(), r[0]->inputs.end(), value) == 1 ? r[0] : nullptr;
}

bool is_scalar(const Graph& g, const std::string& value, double expected, double tolerance) {
  if (!g.is_constant(value)) return false;
  const graph::HostTensor& t = g.initializers.at(value);
  if (t.numel() != 1 || !t.dtype().is_float()) return false;
  return std::abs(t.f64_at(0) - expected) <= tolerance * std::max(1.0, std::abs(expected));
}

std::string other_input(const Node& n, const std::string& value) {
  if (n.inputs.size() != 2) return "";
  if (n.inputs[0] == value) return n.inputs[1];
  if (n.inputs[1] == value) return n.inputs[0];
  return "";
}

void erase_nodes_defining(Graph& g, const std::set<std::string>& values) {
  std::erase_if(g.nodes,
                [&](const Node& n) { return !n.outputs.empty() && values.count(n.outputs[0]); });
}

void replace_pattern(Graph& g, const std::string& out, Node fused,
                     const std::set<std::string>& interior) {
  for (Node& last : g.nodes)
    if (!last.outputs.empty() && last.outputs[0] == out) {
      fused.name = last.name;
      fused.outputs = {out};
      fused.source_index = last.source_index;
      last = std::move(fused);
      break;
    }
  erase_nodes_defining(g, interior);
}

}  // namespace kiln::graph
