#include "network/fold_batch_norm.h"

#include <cmath>

#include "compiler/graph/rewrites/graph_uses.h"

namespace kiln::network {

using graph::Graph;
using graph::HostTensor;
using graph::Node;

namespace {

// Whether BatchNormalization `bn` can fold into Conv `conv` (see the header).
bool foldable(const Graph& g, const Node& conv, const Node& bn,
              const std::map<std::string, int>& uses) {
  if (conv.op_type != "Conv" || !conv.epilogue.empty()) return false;
  if (uses.at(conv.outputs[0]) != 1) return false;
  if (!g.is_constant(conv.inputs[1]) || (conv.has_input(2) && !g.is_constant(conv.inputs[2])))
    return false;
  for (size_t i = 1; i < 5; ++i)
    if (!bn.has_input(i) || !g.is_constant(bn.inputs[i])) return false;
  // Not in training mode (the batch's statistics), which map_batch_norm refuses.
  if (bn.attr_int("training_mode", 0) != 0) return false;
  for (size_t i = 1; i < bn.outputs.size(); ++i)
    if (bn.has_output(i)) return false;
  return g.initializers.at(conv.inputs[1]).dtype() == graph::DataType::f32();
}

void fold_into(Graph& g, Node& conv, const Node& bn) {
  const HostTensor& w = g.initializers.at(conv.inputs[1]);
  const int64_t o = w.shape()[0], per_o = w.numel() / o;
  auto channel = [&](size_t input) { return g.initializers.at(bn.inputs[input]).to_f64(); };
  std::vector<double> gamma = channel(1), beta = channel(2), mean = channel(3), var = channel(4);
  const double eps = bn.attr_float("epsilon", 1e-5f);
  user_check(static_cast<int64_t>(gamma.size()) == o)
      << g.describe(bn) << ": " << gamma.size() << " channels after a Conv with " << o
      << " output channels";
  std::vector<double> bias(o, 0.0);
  if (conv.has_input(2)) bias = g.initializers.at(conv.inputs[2]).to_f64();
  std::vector<double> wv = w.to_f64();
  for (int64_t c = 0; c < o; ++c) {
    double s = gamma[c] / std::sqrt(var[c] + eps);
    for (int64_t i = 0; i < per_o; ++i) wv[c * per_o + i] *= s;
    bias[c] = (bias[c] - mean[c]) * s + beta[c];
  }
  std::string wname = g.add_constant(conv.inputs[1] + ".bn_folded",
                                     HostTensor::from_f64(w.dtype(), w.shape(), wv));
  std::string bname =
      g.add_constant(conv.name + ".bias_bn_folded", HostTensor::from_f64(w.dtype(), {o}, bias));
  conv.inputs.resize(3);
  conv.inputs[1] = wname;
  conv.inputs[2] = bname;
  conv.outputs[0] = bn.outputs[0];
}

// Whether `bn` normalises by constant statistics (inference mode, one output) f32 data of
// rank 2 or more.
bool constant_statistics(const Graph& g, const Node& bn) {
  for (size_t i = 1; i < 5; ++i)
    if (!bn.has_input(i) || !g.is_constant(bn.inputs[i])) return false;
  if (bn.attr_int("training_mode", 0) != 0) return false;
  for (size_t i = 1; i < bn.outputs.size(); ++i)
    if (bn.has_output(i)) return false;
  std::optional<graph::ValueType> t = g.type_of(bn.inputs[0]);
  return t && t->dtype == graph::DataType::f32() && t->is_concrete() && t->dims().size() >= 2;
}

}  // namespace

int batch_norms_to_scale_shifts(Graph& g) {
  int rewritten = 0;
  for (Node& bn : g.nodes) {
    if (bn.op_type != "BatchNormalization" || !bn.epilogue.empty() || !constant_statistics(g, bn))
      continue;
    const std::vector<int64_t> x = g.type_of(bn.inputs[0])->dims();
    auto channel = [&](size_t input) { return g.initializers.at(bn.inputs[input]).to_f64(); };
    const std::vector<double> gamma = channel(1), beta = channel(2), mean = channel(3),
                              var = channel(4);
    const double eps = bn.attr_float("epsilon", 1e-5f);
    const int64_t c = x[1];
    user_check(static_cast<int64_t>(gamma.size()) == c && beta.size() == gamma.size() &&
               mean.size() == gamma.size() && var.size() == gamma.size())
        << g.describe(bn) << ": scale, B, mean and var must hold " << c << " values (the channels)";
    std::vector<double> scale(c), shift(c);
    for (int64_t i = 0; i < c; ++i) {
      scale[i] = gamma[i] / std::sqrt(var[i] + eps);
      shift[i] = beta[i] - mean[i] * scale[i];
    }
    std::vector<int64_t> shape(x.size() - 1, 1);
    shape[0] = c;
    const std::string base = bn.name.empty() ? bn.outputs[0] : bn.name;
    const std::string s =
        g.add_constant(base + ".scale", HostTensor::from_f64(graph::DataType::f32(), shape, scale));
    const std::string t =
        g.add_constant(base + ".shift", HostTensor::from_f64(graph::DataType::f32(), shape, shift));
    bn.op_type = "ScaleShift";
    bn.inputs = {bn.inputs[0], s, t};
    bn.outputs.resize(1);
    bn.attrs.clear();
    ++rewritten;
  }
  if (rewritten > 0) erase_unread_initializers(g);  // the statistics, now folded
  return rewritten;
}

int fold_batch_norm(Graph& graph) {
  int folded = 0;
  std::map<std::string, int> uses = count_uses(graph);
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    Node& bn = graph.nodes[i];
    if (bn.op_type != "BatchNormalization") continue;
    int p = producer_of(graph, bn.inputs[0]);
    if (p < 0 || !foldable(graph, graph.nodes[p], bn, uses)) continue;
    fold_into(graph, graph.nodes[p], bn);
    graph.nodes.erase(graph.nodes.begin() + static_cast<long>(i));
    --i;
    ++folded;
  }
  erase_unread_initializers(graph);  // weights replaced by folded copies
  return folded;
}

}  // namespace kiln::network
