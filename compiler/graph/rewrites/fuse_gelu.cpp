#include "compiler/graph/rewrites/fuse_gelu.h"

#include <cmath>
#include <optional>
#include <set>

#include "compiler/graph/rewrites/graph_match.h"

namespace kiln::graph {


namespace {

struct GeluMatch {
  std::string x;                   // the GELU's input
  std::string out;                 // the value the pattern's last node defines
  std::set<std::string> interior;  // values of the pattern's nodes (all but `out` read once)
};

// x when `scaled` is x / sqrt 2 or x * (1 / sqrt 2), else "".
std::string unscaled(const Graph& g, const std::string& scaled) {
  const Node* n = producer_node(g, scaled);
  if (!n || n->inputs.size() != 2) return "";
  if (n->op_type == "Div" && is_scalar(g, n->inputs[1], std::sqrt(2.0), 1e-5)) return n->inputs[0];
  if (n->op_type == "Mul") {
    for (int i = 0; i < 2; ++i)
      if (is_scalar(g, n->inputs[1 - i], 1.0 / std::sqrt(2.0), 1e-5)) return n->inputs[i];
  }
  return "";
}

// The Mul reading `value` once, when `value` has no other reader.
const Node* only_mul_reader(const Graph& g, const std::string& value) {
  const Node* r = only_reader(g, value);
  return r && r->op_type == "Mul" && r->inputs.size() == 2 ? r : nullptr;
}

std::optional<GeluMatch> match_at(const Graph& g, const Node& erf) {
  GeluMatch m;
  m.x = unscaled(g, erf.inputs[0]);
  if (m.x.empty() || !only_reader(g, erf.inputs[0])) return std::nullopt;
  m.interior = {erf.inputs[0], erf.outputs[0]};
  // 1 + erf(...)
  const Node* plus = only_reader(g, erf.outputs[0]);
  if (!plus || plus->op_type != "Add" || !is_scalar(g, other_input(*plus, erf.outputs[0]), 1.0))
    return std::nullopt;
  m.interior.insert(plus->outputs[0]);
  // The product of x, 0.5 and (1 + erf): two Muls in one of three groupings.
  const Node* first = only_mul_reader(g, plus->outputs[0]);
  if (!first) return std::nullopt;
  const std::string u = other_input(*first, plus->outputs[0]);
  if (const Node* half_x = producer_op(g, u, "Mul"); half_x && other_input(*half_x, m.x) != "" &&
                                                     is_scalar(g, other_input(*half_x, m.x), 0.5) &&
                                                     only_reader(g, u)) {
    m.interior.insert(u);  // (0.5 * x) * (1 + erf)
    m.out = first->outputs[0];
    return m;
  }
  if (u != m.x && !is_scalar(g, u, 0.5)) return std::nullopt;
  const Node* second = only_mul_reader(g, first->outputs[0]);
  if (!second) return std::nullopt;
  const std::string rest = other_input(*second, first->outputs[0]);
  if (u == m.x ? !is_scalar(g, rest, 0.5) : rest != m.x) return std::nullopt;
  m.interior.insert(first->outputs[0]);
  m.out = second->outputs[0];
  return m;
}

}  // namespace

int fuse_gelu(Graph& g) {
  int fused = 0;
  for (bool changed = true; changed;) {
    changed = false;
    for (const Node& n : g.nodes) {
      if (n.op_type != "Erf") continue;
      std::optional<GeluMatch> m = match_at(g, n);
      if (!m) continue;
      Node gelu;
      gelu.op_type = "Gelu";
      gelu.inputs = {m->x};
      replace_pattern(g, m->out, std::move(gelu), m->interior);
      ++fused;
      changed = true;
      break;
    }
  }
  return fused;
}

}  // namespace kiln::graph
