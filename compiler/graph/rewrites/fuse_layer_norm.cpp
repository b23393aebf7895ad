#include "compiler/graph/rewrites/fuse_layer_norm.h"

#include <optional>
#include <set>

#include "compiler/graph/rewrites/graph_match.h"

namespace kiln::graph {


namespace {

struct LayerNormMatch {
  std::string x, gamma, beta, out;
  double eps = 0;
  std::set<std::string> interior;
};

// Whether `n` is a ReduceMean over the last axis only, keeping it.
bool mean_over_last_axis(const Graph& g, const Node& n) {
  if (n.op_type != "ReduceMean" || n.attr_int("keepdims", 1) != 1 || !n.has_input(1) ||
      !g.is_constant(n.inputs[1]))
    return false;
  std::optional<graph::ValueType> t = g.type_of(n.inputs[0]);
  if (!t || !t->is_concrete()) return false;
  std::vector<int64_t> axes = g.initializers.at(n.inputs[1]).to_i64();
  const int64_t rank = static_cast<int64_t>(t->dims().size());
  return axes.size() == 1 && (axes[0] == -1 || axes[0] == rank - 1);
}

// A constant of `cols` elements (gamma or beta over the last axis).
bool is_row_constant(const Graph& g, const std::string& value, int64_t cols) {
  return g.is_constant(value) && g.initializers.at(value).numel() == cols;
}

std::optional<LayerNormMatch> match_at(const Graph& g, const Node& mean) {
  if (!mean_over_last_axis(g, mean)) return std::nullopt;
  LayerNormMatch m;
  m.x = mean.inputs[0];
  const int64_t cols = g.type_of(m.x)->dims().back();
  // d = X - mean: the only reader of mean.
  const Node* sub = only_reader(g, mean.outputs[0]);
  if (!sub || sub->op_type != "Sub" ||
      sub->inputs != std::vector<std::string>{m.x, mean.outputs[0]})
    return std::nullopt;
  const std::string d = sub->outputs[0];
  // d is read by the square and by the division, nothing else.
  std::vector<const Node*> d_readers = readers(g, d);
  if (d_readers.size() != 2) return std::nullopt;
  const Node* square = nullptr;
  const Node* div = nullptr;
  for (const Node* r : d_readers) {
    if (r->op_type == "Pow" && r->inputs[0] == d && is_scalar(g, r->inputs[1], 2.0)) square = r;
    if (r->op_type == "Mul" && r->inputs.size() == 2 && r->inputs[0] == d && r->inputs[1] == d)
      square = r;
    if (r->op_type == "Div" && r->inputs[0] == d) div = r;
  }
  if (!square || !div) return std::nullopt;
  const Node* var = only_reader(g, square->outputs[0]);
  if (!var || !mean_over_last_axis(g, *var)) return std::nullopt;
  const Node* add_eps = only_reader(g, var->outputs[0]);
  if (!add_eps || add_eps->op_type != "Add") return std::nullopt;
  const std::string eps = other_input(*add_eps, var->outputs[0]);
  if (!g.is_constant(eps) || g.initializers.at(eps).numel() != 1) return std::nullopt;
  m.eps = g.initializers.at(eps).f64_at(0);
  const Node* sqrt = only_reader(g, add_eps->outputs[0]);
  if (!sqrt || sqrt->op_type != "Sqrt" || only_reader(g, sqrt->outputs[0]) != div)
    return std::nullopt;
  m.interior = {mean.outputs[0], d, square->outputs[0], var->outputs[0], add_eps->outputs[0],
                sqrt->outputs[0]};
  m.out = div->outputs[0];
  // Optional affine part: * gamma, then + beta.
  if (const Node* mul = only_reader(g, m.out);
      mul && mul->op_type == "Mul" && is_row_constant(g, other_input(*mul, m.out), cols)) {
    m.gamma = other_input(*mul, m.out);
    m.interior.insert(m.out);
    m.out = mul->outputs[0];
  }
  if (const Node* add = only_reader(g, m.out);
      add && add->op_type == "Add" && is_row_constant(g, other_input(*add, m.out), cols)) {
    m.beta = other_input(*add, m.out);
    m.interior.insert(m.out);
    m.out = add->outputs[0];
  }
  return m;
}

std::string row_constant(Graph& g, const std::string& base, int64_t cols, double value) {
  return g.add_constant(
      base, HostTensor::from_f64(graph::DataType::f32(), {cols}, std::vector<double>(cols, value)));
}

}  // namespace

int fuse_layer_norm(Graph& g) {
  int fused = 0;
  for (bool changed = true; changed;) {
    changed = false;
    for (const Node& n : g.nodes) {
      std::optional<LayerNormMatch> m = match_at(g, n);
      if (!m) continue;
      const int64_t cols = g.type_of(m->x)->dims().back();
      if (m->gamma.empty()) m->gamma = row_constant(g, m->out + ".gamma", cols, 1.0);
      if (m->beta.empty()) m->beta = row_constant(g, m->out + ".beta", cols, 0.0);
      Node ln;
      ln.op_type = "LayerNormalization";
      ln.inputs = {m->x, m->gamma, m->beta};
      ln.attrs["axis"] = int64_t{-1};
      ln.attrs["epsilon"] = static_cast<float>(m->eps);
      replace_pattern(g, m->out, std::move(ln), m->interior);
      ++fused;
      changed = true;
      break;
    }
  }
  return fused;
}

}  // namespace kiln::graph
