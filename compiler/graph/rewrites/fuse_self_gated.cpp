#include "compiler/graph/rewrites/fuse_self_gated.h"

#include <array>
#include <cmath>
#include <unordered_map>

#include "compiler/graph/rewrites/graph_match.h"

namespace kiln::graph {


namespace {

// An activation x * gate(x), its gate a chain of one-input nodes, innermost first.
struct Gated {
  const char* fused;
  std::vector<std::string> gate;
};
const std::array<Gated, 3> kGated = {Gated{"Silu", {"Sigmoid"}},
                                     Gated{"Mish", {"Softplus", "Tanh"}},
                                     Gated{"HardSwish", {"HardSigmoid"}}};

// Whether a gate node computes what the fused op assumes: HardSwish is x times HardSigmoid
// with alpha 1/6 and beta 1/2 (PyTorch's export of hardswish before opset 14), not with
// HardSigmoid's defaults (0.2, 0.5).
bool gate_node_fits(const Node& n) {
  if (n.op_type != "HardSigmoid") return true;
  return std::abs(n.attr_float("alpha", 0.2f) - 1.0f / 6) < 1e-6f &&
         n.attr_float("beta", 0.5f) == 0.5f;
}

// The values inside the gate that ends in `g` (each read only by the next node) when it is
// `chain` applied to `x`; empty when it is not.
std::set<std::string> gate_values(const Graph& graph,
                                  const std::unordered_map<std::string, const Node*>& producers,
                                  const std::string& x, const std::string& g,
                                  const std::vector<std::string>& chain) {
  std::set<std::string> interior;
  std::string value = g;
  for (auto op = chain.rbegin(); op != chain.rend(); ++op) {
    auto it = producers.find(value);
    if (it == producers.end()) return {};
    const Node& n = *it->second;
    if (n.op_type != *op || n.inputs.size() != 1 || !n.epilogue.empty() || !gate_node_fits(n) ||
        !only_reader(graph, value))
      return {};
    interior.insert(value);
    value = n.inputs[0];
  }
  return value == x ? interior : std::set<std::string>{};
}

}  // namespace

int fuse_self_gated(Graph& g) {
  std::unordered_map<std::string, const Node*> producers;
  for (const Node& n : g.nodes)
    for (const std::string& o : n.outputs) producers[o] = &n;
  // Matched first, replaced after (replacing changes the node list). Matches never share a
  // node: a gate's values have one reader each, and x and the output are kept by name.
  struct Match {
    std::string out;
    Node fused;
    std::set<std::string> interior;
  };
  std::vector<Match> matches;
  for (const Node& mul : g.nodes) {
    if (mul.op_type != "Mul" || mul.inputs.size() != 2 || !mul.epilogue.empty()) continue;
    for (int side = 0; side < 2; ++side) {
      const std::string &x = mul.inputs[side], &gate = mul.inputs[1 - side];
      const Gated* found = nullptr;
      std::set<std::string> interior;
      for (const Gated& a : kGated)
        if (interior = gate_values(g, producers, x, gate, a.gate); !interior.empty()) {
          found = &a;
          break;
        }
      if (!found) continue;
      Node act;
      act.op_type = found->fused;
      act.inputs = {x};
      matches.push_back({mul.outputs[0], std::move(act), std::move(interior)});
      break;
    }
  }
  for (Match& m : matches) replace_pattern(g, m.out, std::move(m.fused), m.interior);
  return static_cast<int>(matches.size());
}

}  // namespace kiln::graph
