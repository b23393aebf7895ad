// op_table mappers for elementwise operators: activations (with their coefficients) and
// numpy-broadcasting binary ops.
#include <algorithm>
#include <cmath>

#include "compiler/network/op_mapping.h"

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

// Clip bounds in thousandths, as the clip kernel takes them (constants only).
int64_t clip_bound(const Graph& g, const Node& n, size_t input, double fallback) {
  double v = fallback;
  if (n.has_input(input)) {
    node_check(g.is_constant(n.inputs[input])) << "Clip bounds must be constants";
    v = g.initializers.at(n.inputs[input]).f64_at(0);
  }
  // Beyond 1e12 every f32 activation is inside the bound anyway.
  v = std::clamp(v, -1e12, 1e12);
  double milli = v * 1000.0;
  node_check(std::abs(milli - std::round(milli)) < 1e-6 * std::max(1.0, std::abs(milli)))
      << "Clip bound " << v << " is not a multiple of 0.001 (the clip kernel's resolution)";
  return static_cast<int64_t>(std::llround(milli));
}

}  // namespace

MappedNode map_clip(Graph& g, const Node& n) {
  MappedNode m = map_elementwise(g, n, "clip");
  m.workload.params["lo_milli"] = clip_bound(g, n, 1, -1e12);
  m.workload.params["hi_milli"] = clip_bound(g, n, 2, 1e12);
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
  m.workload.params["alpha_e9"] = e9(n.attr_float("alpha", 0.01f));
  return m;
}

MappedNode map_hard_sigmoid(Graph& g, const Node& n) {
  MappedNode m = map_elementwise(g, n, "hard_sigmoid");
  m.workload.params["alpha_e9"] = e9(n.attr_float("alpha", 0.2f));
  m.workload.params["beta_e9"] = e9(n.attr_float("beta", 0.5f));
  return m;
}

MappedNode map_coefficient_activation(Graph& g, const Node& n, const std::string& op) {
  MappedNode m = map_elementwise(g, n, op);
  // An absent attribute leaves the kernel's default, which is ONNX's.
  for (const char* key : {"alpha", "gamma"})
    if (n.has_attr(key)) m.workload.params[std::string(key) + "_e9"] = e9(n.attr_float(key, 0));
  return m;
}

}  // namespace kiln::network::mapping
