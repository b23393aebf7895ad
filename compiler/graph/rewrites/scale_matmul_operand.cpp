#include "compiler/graph/rewrites/scale_matmul_operand.h"

#include <algorithm>
#include <map>
#include <set>

#include "compiler/graph/rewrites/graph_uses.h"

namespace kiln::graph {


namespace {

int64_t numel_of(const Graph& g, const std::string& value) {
  std::optional<graph::ValueType> t = g.type_of(value);
  return t && t->is_concrete() ? graph::shape_numel(t->dims()) : -1;
}

// Whether `c` is a one-element f32 constant whose broadcast leaves `x`'s shape alone.
bool is_scalar_factor(const Graph& g, const std::string& c, const std::string& x) {
  if (!g.is_constant(c)) return false;
  const HostTensor& t = g.initializers.at(c);
  std::optional<graph::ValueType> o = g.type_of(x);
  return t.numel() == 1 && t.dtype() == graph::DataType::f32() && o && o->is_concrete() &&
         t.shape().size() <= o->dims().size();
}

}  // namespace

int scale_matmul_operand(Graph& g) {
  const std::map<std::string, int> uses = count_uses(g);
  std::map<std::string, size_t> producer;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (const std::string& o : g.nodes[i].outputs) producer[o] = i;
  // MatMul index -> (the scaling node's index, which operand k to scale).
  std::map<size_t, std::pair<size_t, int>> moves;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& s = g.nodes[i];
    if ((s.op_type != "Mul" && s.op_type != "Div") || s.inputs.size() != 2 || !s.epilogue.empty())
      continue;
    for (int side : {0, 1}) {
      if (s.op_type == "Div" && side == 1) break;  // c / (A B) is no scaling
      const std::string& prod = s.inputs[side];
      auto p = producer.find(prod);
      auto u = uses.find(prod);
      if (p == producer.end() || u == uses.end() || u->second != 1) continue;
      const Node& mm = g.nodes[p->second];
      if (mm.op_type != "MatMul" || mm.inputs.size() != 2 || !mm.epilogue.empty() ||
          moves.count(p->second) || g.type_of(s.outputs[0]) != g.type_of(prod))
        continue;
      const int64_t out = numel_of(g, prod), a = numel_of(g, mm.inputs[0]),
                    b = numel_of(g, mm.inputs[1]);
      if (out < 0 || a < 0 || b < 0 || std::min(a, b) >= out) continue;
      const int k = a <= b ? 0 : 1;
      if (!is_scalar_factor(g, s.inputs[1 - side], mm.inputs[k])) continue;
      moves[p->second] = {i, k};
      break;
    }
  }
  if (moves.empty()) return 0;
  std::set<size_t> scalings;
  for (const auto& [mm, move] : moves) scalings.insert(move.first);
  std::vector<Node> nodes;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (scalings.count(i)) continue;  // its value is now the MatMul's
    auto m = moves.find(i);
    if (m == moves.end()) {
      nodes.push_back(g.nodes[i]);
      continue;
    }
    Node mm = g.nodes[i];
    const Node& s = g.nodes[m->second.first];
    const int k = m->second.second;
    const std::string c = s.inputs[s.inputs[0] == mm.outputs[0] ? 1 : 0];
    const std::string operand = mm.inputs[k];
    if (g.is_constant(operand)) {
      // Weights: scaled once here.
      const HostTensor& w = g.initializers.at(operand);
      const double f = g.initializers.at(c).f64_at(0);
      std::vector<double> v = w.to_f64();
      for (double& x : v) x = s.op_type == "Mul" ? x * f : x / f;
      mm.inputs[k] =
          g.add_constant(operand + ".scaled", HostTensor::from_f64(w.dtype(), w.shape(), v));
    } else {
      Node scale = s;
      scale.inputs = {operand, c};
      scale.outputs = {g.unique_name(operand + ".scaled")};
      g.types[scale.outputs[0]] = *g.type_of(operand);
      mm.inputs[k] = scale.outputs[0];
      nodes.push_back(std::move(scale));
    }
    g.types.erase(mm.outputs[0]);
    mm.outputs = s.outputs;  // the scaled product is the scaling node's value
    nodes.push_back(std::move(mm));
  }
  g.nodes = std::move(nodes);
  erase_unread_initializers(g);
  return static_cast<int>(moves.size());
}

}  // namespace kiln::graph
