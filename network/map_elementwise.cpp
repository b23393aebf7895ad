// op_table mappers for elementwise operators: activations (with their coefficients) and
// numpy-broadcasting binary ops.
#include <limits>
#include <algorithm>
#include <cmath>

#include "network/op_mapping.h"

namespace kiln::network::mapping {

// Elementwise ops: "a", "b" padded to the output's rank with leading 1s.
MappedNode map_elementwise(const Graph& g, const Node& n, const std::string& op) {
  MappedNode m;
  Workload& w = m.workload;
  w.op = op;
  std::vector<int64_t> out = dims_of(g, n.outputs[0]);
  if (out.empty()) out = {1};
  node_check(out.size() <= 8) << "rank " << out.size() << " is more than the kernels' 8";
  w.params["rank"] = static_cast<int64_t>(out.size());
  const char* names[] = {"a", "b", "c"};
  // Clip's further inputs are its bounds (workload parameters); a binary op reads two, where
  // three.
  const size_t most = op == "where" ? 3 : 2;
  node_check(op == "clip" || n.inputs.size() <= most)
      << n.inputs.size() << " inputs, the kernel reads at most " << most;
  size_t operands = op == "clip" || op == "copy" ? 1 : n.inputs.size();
  for (size_t o = 0; o < operands; ++o) {
    std::vector<int64_t> d = dims_of(g, n.inputs[o]);
    d.insert(d.begin(), out.size() - d.size(), 1);
    for (size_t i = 0; i < d.size(); ++i) w.params[names[o] + std::to_string(i)] = d[i];
    m.operands[names[o]] = n.inputs[o];
  }
  return m;
}

namespace {

// A Clip bound exactly as the model states it (constants only); an absent bound is no bound
// (an infinity), which the kernel and its reference compare against like any other.
double clip_bound(const Graph& g, const Node& n, size_t input, double fallback) {
  if (!n.has_input(input)) return fallback;
  node_check(g.is_constant(n.inputs[input])) << "Clip bounds must be constants";
  const double v = g.initializers.at(n.inputs[input]).f64_at(0);
  node_check(!std::isnan(v)) << "Clip bound " << (input == 1 ? "min" : "max") << " is NaN";
  return v;
}

}  // namespace

MappedNode map_clip(Graph& g, const Node& n) {
  MappedNode m = map_elementwise(g, n, "clip");
  constexpr double kNoBound = std::numeric_limits<double>::infinity();
  m.workload.params["lo"] = clip_bound(g, n, 1, -kNoBound);
  m.workload.params["hi"] = clip_bound(g, n, 2, kNoBound);
  return m;
}

MappedNode map_cast(Graph& g, const Node& n) {
  // Every computed value is held in f32: a cast to float is a copy, to bool a test for
  // non-zero, to an integer a rounding toward zero (of a value already whole when it came
  // from an integer).
  const graph::DataType to = g.type_of(n.outputs[0])->dtype;
  if (to == graph::DataType::f32()) return map_reshape(g, n);
  if (to == graph::DataType::boolean()) return map_elementwise(g, n, "nonzero");
  return map_elementwise(g, n, "trunc");
}

MappedNode map_expand(Graph& g, const Node& n) {
  MappedNode m = map_elementwise(g, n, "copy");
  std::vector<int64_t> out = dims_of(g, n.outputs[0]);
  for (size_t i = 0; i < out.size(); ++i) m.workload.params["o" + std::to_string(i)] = out[i];
  return m;
}

MappedNode map_min_max(Graph& g, const Node& n, const std::string& op) {
  if (n.inputs.size() == 1) return map_reshape(g, n);  // the maximum of one tensor is itself
  return map_elementwise(g, n, op);
}

MappedNode map_leaky_relu(Graph& g, const Node& n) {
  MappedNode m = map_elementwise(g, n, "leaky_relu");
  m.workload.params["alpha"] = n.attr_float("alpha", 0.01f);
  return m;
}

MappedNode map_hard_sigmoid(Graph& g, const Node& n) {
  MappedNode m = map_elementwise(g, n, "hard_sigmoid");
  m.workload.params["alpha"] = n.attr_float("alpha", 0.2f);
  m.workload.params["beta"] = n.attr_float("beta", 0.5f);
  return m;
}

MappedNode map_coefficient_activation(Graph& g, const Node& n, const std::string& op) {
  MappedNode m = map_elementwise(g, n, op);
  // An absent attribute leaves the kernel's default, which is ONNX's.
  for (const char* key : {"alpha", "gamma"})
    if (n.has_attr(key)) m.workload.params[key] = n.attr_float(key, 0);
  return m;
}

}  // namespace kiln::network::mapping
