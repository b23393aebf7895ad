// The helpers of op_mapping.h.
#include "network/op_mapping.h"

#include <cmath>

#include "network/fuse_epilogues.h"

namespace kiln::network::mapping {

std::vector<int64_t> dims_of(const Graph& g, const std::string& value) {
  std::optional<graph::ValueType> t = g.type_of(value);
  user_check(t && t->is_concrete()) << "value '" << value << "' has no concrete shape";
  return t->dims();
}

int64_t numel(const std::vector<int64_t>& d) {
  int64_t n = 1;
  for (int64_t x : d) n *= x;
  return n;
}

// An attribute of two per-axis values (strides, dilations) that the 2-D kernels take as H, W.
std::pair<int64_t, int64_t> hw_attr(const Graph& g, const Node& n, const std::string& key,
                                    int64_t fallback) {
  std::vector<int64_t> v = n.attr_ints(key, {fallback, fallback});
  node_check(v.size() == 2) << key << " must have 2 values for a 2-D operator, got " << v.size();
  return {v[0], v[1]};
}

// Symmetric 2-D padding from ONNX pads [top, left, bottom, right].
std::pair<int64_t, int64_t> hw_pads(const Graph& g, const Node& n) {
  std::string auto_pad = n.attr_string("auto_pad", "NOTSET");
  node_check(auto_pad == "NOTSET" || auto_pad == "VALID")
      << "auto_pad " << auto_pad << " is not supported (valid: NOTSET with explicit pads, VALID)";
  std::vector<int64_t> p = n.attr_ints("pads", {0, 0, 0, 0});
  node_check(p.size() == 4) << "pads must have 4 values for a 2-D operator, got " << p.size();
  node_check(p[0] == p[2] && p[1] == p[3])
      << "asymmetric pads [" << p[0] << "," << p[1] << "," << p[2] << "," << p[3]
      << "] are not supported (top must equal bottom and left right)";
  return {p[0], p[1]};
}

void set_nchw(Workload& w, const std::vector<int64_t>& x) {
  w.params["N"] = x[0], w.params["C"] = x[1], w.params["H"] = x[2], w.params["W"] = x[3];
}

std::vector<int64_t> rank4_input(const Graph& g, const Node& n) {
  std::vector<int64_t> x = dims_of(g, n.inputs[0]);
  node_check(x.size() == 4) << "only 2-D (NCHW) inputs are supported, got rank " << x.size();
  return x;
}

// The fused epilogue steps of a Conv / Gemm / MatMul, after an optional bias.
void add_epilogue(const Node& n, MappedNode& m) {
  for (const Node& e : n.epilogue) {
    std::string step = epilogue_step(e);
    m.workload.epilogue.push_back(step);
    if (step == "residual") m.operands["residual"] = e.inputs[0];
  }
}

double epsilon(const Graph& g, const Node& n) {
  const double eps = n.attr_float("epsilon", 1e-5f);
  node_check(eps > 0 && eps <= 1.0) << "epsilon " << eps << " is outside (0, 1]";
  return eps;
}

int64_t normalized_axis(const Graph& g, const Node& n, int64_t axis, int64_t rank) {
  if (axis < 0) axis += rank;
  node_check(axis >= 0 && axis < rank) << "axis " << axis << " is out of range for rank " << rank;
  return axis;
}

std::vector<int64_t> constant_ints(const Graph& g, const Node& n, size_t input, const char* what) {
  node_check(g.is_constant(n.inputs[input])) << what << " must be a constant";
  return g.initializers.at(n.inputs[input]).to_i64();
}

}  // namespace kiln::network::mapping
