#include "network/fuse_epilogues.h"

#include <algorithm>

#include "compiler/graph/rewrites/graph_uses.h"

namespace kiln::network {

using graph::Graph;
using graph::Node;

namespace {

bool is_scalar_constant(const Graph& g, const Node& n, size_t i, double value) {
  if (!n.has_input(i) || !g.is_constant(n.inputs[i])) return false;
  const graph::HostTensor& t = g.initializers.at(n.inputs[i]);
  return t.numel() == 1 && t.f64_at(0) == value;
}

// The epilogue step `reader` becomes when fused after `value`, or "" when it cannot.
std::string fusable_step(const Graph& g, const Node& producer, const std::string& value,
                         const Node& reader) {
  const std::string& op = reader.op_type;
  // A ScaleShift is an elementwise chain: the activations its steps share by name.
  if (producer.op_type == "ScaleShift" && op != "Relu" && op != "Sigmoid" && op != "Tanh" &&
      op != "Silu" && op != "Mish" && op != "HardSwish")
    return "";
  if (op == "Relu") return "relu";
  if (op == "Sigmoid") return "sigmoid";
  if (op == "Tanh") return "tanh";
  if (op == "Silu") return "silu";  // fuse_self_gated's
  if (op == "Mish") return "mish";
  if (op == "HardSwish") return "hard_swish";
  if (op == "Clip")
    return is_scalar_constant(g, reader, 1, 0.0) && is_scalar_constant(g, reader, 2, 6.0)
               ? "relu6"
               : "";
  if (op != "Add" || reader.inputs.size() != 2) return "";
  const std::string& other = reader.inputs[0] == value ? reader.inputs[1] : reader.inputs[0];
  if (other == value || g.is_constant(other)) return "";
  for (const Node& e : producer.epilogue)
    if (e.op_type == "Add") return "";  // one residual per kernel
  return g.type_of(other) == g.type_of(value) ? "residual" : "";
}

// The epilogue node of `reader`: its operands after the running value.
Node epilogue_node(const Node& reader, const std::string& value) {
  Node e = reader;
  e.inputs.clear();
  bool skipped = false;
  for (const std::string& v : reader.inputs) {
    if (v == value && !skipped) {
      skipped = true;
      continue;
    }
    e.inputs.push_back(v);
  }
  return e;
}

// Conv, Gemm and a MatMul by a constant 2-D B (a dense layer); not a batched MatMul of two
// computed operands (attention's scores, to which T5 adds a position bias), whose kernel has
// no epilogue.
bool can_have_epilogue(const Graph& g, const Node& n) {
  if (n.op_type == "Conv" || n.op_type == "Gemm" || n.op_type == "ScaleShift") return true;
  if (n.op_type != "MatMul") return false;
  std::optional<graph::ValueType> b = g.type_of(n.inputs[1]);
  return g.is_constant(n.inputs[1]) && b && b->shape && b->shape->size() == 2;
}

}  // namespace

std::string epilogue_step(const Node& step) {
  if (step.op_type == "Relu") return "relu";
  if (step.op_type == "Sigmoid") return "sigmoid";
  if (step.op_type == "Tanh") return "tanh";
  if (step.op_type == "Silu") return "silu";
  if (step.op_type == "Mish") return "mish";
  if (step.op_type == "HardSwish") return "hard_swish";
  if (step.op_type == "Clip") return "relu6";
  if (step.op_type == "Add") return "residual";
  internal_check(false) << "no epilogue step for a fused " << step.op_type;
  return "";
}

int fuse_epilogues(Graph& graph) {
  // One pass in order. A fused pair becomes one node in the reader's place, so the merged node
  // is met again further on and can take the next step of a chain (Conv, Add, Relu). Use
  // counts and readers are computed once: fusing moves no value between nodes but the one it
  // hides (an unrolled GRU has thousands of MatMul + Add pairs; a rescan per fusion was
  // quadratic).
  const std::map<std::string, int> uses = count_uses(graph);
  std::map<std::string, size_t> reader_of;  // the node that reads a value as a direct input
  for (size_t j = 0; j < graph.nodes.size(); ++j)
    for (const std::string& v : graph.nodes[j].inputs)
      if (!v.empty() && !reader_of.count(v)) reader_of[v] = j;
  std::vector<bool> fused_away(graph.nodes.size(), false);
  int fused = 0;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const Node& producer = graph.nodes[i];
    if (!can_have_epilogue(graph, producer)) continue;
    const std::string value = producer.outputs[0];
    auto use = uses.find(value);
    auto reader = reader_of.find(value);
    if (use == uses.end() || use->second != 1 || reader == reader_of.end()) continue;
    Node& into = graph.nodes[reader->second];
    if (fusable_step(graph, producer, value, into).empty()) continue;
    Node merged = producer;
    merged.epilogue.push_back(epilogue_node(into, value));
    merged.outputs = {into.outputs[0]};
    into = std::move(merged);
    fused_away[i] = true;
    ++fused;
  }
  std::vector<Node> kept;
  for (size_t i = 0; i < graph.nodes.size(); ++i)
    if (!fused_away[i]) kept.push_back(std::move(graph.nodes[i]));
  graph.nodes = std::move(kept);
  return fused;
}

}  // namespace kiln::network
