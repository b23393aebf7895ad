#include "compiler/graph/rewrites/instance_norm_to_layer_norm.h"

namespace kiln::graph {


namespace {

// A per-channel constant reshaped to [C, 1, ..., 1] so it broadcasts over an NC... tensor.
std::string per_channel(Graph& g, const Node& n, size_t input, size_t rank) {
  const std::string& v = n.inputs[input];
  user_check(g.is_constant(v)) << g.describe(n) << ": " << (input == 1 ? "scale" : "B")
                               << " must be a constant";
  const HostTensor& t = g.initializers.at(v);
  std::vector<int64_t> shape(rank - 1, 1);
  shape[0] = t.numel();
  return g.add_constant(v + ".per_channel", HostTensor::from_f64(t.dtype(), shape, t.to_f64()));
}

}  // namespace

int instance_norm_to_layer_norm(Graph& g) {
  int rewritten = 0;
  std::vector<Node> out;
  for (Node& n : g.nodes) {
    if (n.op_type != "InstanceNormalization") {
      out.push_back(std::move(n));
      continue;
    }
    std::optional<graph::ValueType> t = g.type_of(n.inputs[0]);
    user_check(t && t->is_concrete() && t->dims().size() >= 3)
        << g.describe(n) << ": the input must have a concrete shape of rank 3 or more";
    const std::vector<int64_t> x = t->dims();
    const std::vector<int64_t> spatial(x.begin() + 2, x.end());
    int64_t cols = 1;
    for (int64_t d : spatial) cols *= d;
    const std::string& y = n.outputs[0];
    Node ln;
    ln.name = n.name;
    ln.op_type = "LayerNormalization";
    ln.source_index = n.source_index;
    ln.inputs = {n.inputs[0],
                 g.add_constant(y + ".unit", HostTensor::from_f64(t->dtype, spatial,
                                                                  std::vector<double>(cols, 1.0))),
                 g.add_constant(y + ".zero", HostTensor::from_f64(t->dtype, spatial,
                                                                  std::vector<double>(cols, 0.0)))};
    ln.outputs = {g.unique_name(y + ".normalized")};
    ln.attrs["axis"] = int64_t{2};
    ln.attrs["epsilon"] = n.attr_float("epsilon", 1e-5f);
    Node mul = ln, add = ln;
    mul.op_type = "Mul", add.op_type = "Add";
    mul.attrs.clear(), add.attrs.clear();
    mul.name = n.name + "/scale", add.name = n.name + "/bias";
    mul.inputs = {ln.outputs[0], per_channel(g, n, 1, x.size())};
    mul.outputs = {g.unique_name(y + ".scaled")};
    add.inputs = {mul.outputs[0], per_channel(g, n, 2, x.size())};
    add.outputs = {y};
    g.types[ln.outputs[0]] = *t;
    g.types[mul.outputs[0]] = *t;
    for (Node* step : {&ln, &mul, &add}) out.push_back(std::move(*step));
    ++rewritten;
  }
  g.nodes = std::move(out);
  return rewritten;
}

}  // namespace kiln::graph
