#include "compiler/network/op_table.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include "compiler/network/fuse_epilogues.h"

namespace kiln::network {

using graph::Graph;
using graph::HostTensor;
using graph::Node;
using schedules::Workload;

namespace {

using Mapper = std::function<MappedNode(Graph&, const Node&)>;

// Raised for a node kiln cannot compile: one message naming the node and why.
#define node_check(cond) user_check(cond) << g.describe(n) << ": "

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

MappedNode map_conv(Graph& g, const Node& n) {
  MappedNode m;
  Workload& w = m.workload;
  w.op = "conv2d";
  std::vector<int64_t> x = rank4_input(g, n), k = dims_of(g, n.inputs[1]);
  set_nchw(w, x);
  w.params["O"] = k[0], w.params["KH"] = k[2], w.params["KW"] = k[3];
  auto [sh, sw] = hw_attr(g, n, "strides", 1);
  auto [dh, dw] = hw_attr(g, n, "dilations", 1);
  auto [ph, pw] = hw_pads(g, n);
  w.params["SH"] = sh, w.params["SW"] = sw, w.params["DH"] = dh, w.params["DW"] = dw;
  w.params["PH"] = ph, w.params["PW"] = pw;
  w.params["groups"] = n.attr_int("group", 1);
  m.operands = {{"data", n.inputs[0]}, {"weight", n.inputs[1]}};
  if (n.has_input(2)) {
    w.epilogue.push_back("bias");
    m.operands["bias"] = n.inputs[2];
  }
  add_epilogue(n, m);
  return m;
}

// ConvTranspose (2-D): the begin pads from `pads`, or from output_shape as ONNX derives them.
MappedNode map_conv_transpose(Graph& g, const Node& n) {
  std::vector<int64_t> x = rank4_input(g, n), k = dims_of(g, n.inputs[1]);
  std::vector<int64_t> y = dims_of(g, n.outputs[0]);
  const int64_t groups = n.attr_int("group", 1);
  auto [sh, sw] = hw_attr(g, n, "strides", 1);
  auto [dh, dw] = hw_attr(g, n, "dilations", 1);
  std::vector<int64_t> pads = n.attr_ints("pads", {0, 0, 0, 0});
  node_check(pads.size() == 4) << "pads must have 4 values for a 2-D operator, got " << pads.size();
  const std::string auto_pad = n.attr_string("auto_pad", "NOTSET");
  if (n.has_attr("output_shape") || auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    // The padding the output size leaves, split as ONNX does (the extra one at the end
    // unless SAME_UPPER).
    std::vector<int64_t> out_pad = n.attr_ints("output_padding", {0, 0});
    const int64_t strides[2] = {sh, sw}, dils[2] = {dh, dw};
    for (int i = 0; i < 2; ++i) {
      int64_t total = strides[i] * (x[2 + i] - 1) + out_pad[i] + (k[2 + i] - 1) * dils[i] + 1 -
                      y[2 + i];
      pads[i] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
    }
  } else {
    node_check(auto_pad == "NOTSET" || auto_pad == "VALID")
        << "auto_pad " << auto_pad << " is not supported";
  }
  MappedNode m;
  Workload& w = m.workload;
  w.op = "conv2d_transpose";
  set_nchw(w, x);
  w.params["O"] = y[1], w.params["KH"] = k[2], w.params["KW"] = k[3];
  w.params["SH"] = sh, w.params["SW"] = sw, w.params["DH"] = dh, w.params["DW"] = dw;
  w.params["PH"] = pads[0], w.params["PW"] = pads[1];
  w.params["OH"] = y[2], w.params["OW"] = y[3], w.params["groups"] = groups;
  m.operands = {{"data", n.inputs[0]}, {"weight", n.inputs[1]}};
  if (n.has_input(2)) {
    w.epilogue.push_back("bias");
    m.operands["bias"] = n.inputs[2];
  }
  add_epilogue(n, m);
  return m;
}

// A constant scaled by `s` (Gemm's alpha and beta), under a new name.
std::string scaled_constant(Graph& g, const std::string& value, double s,
                            std::vector<int64_t> shape, bool transpose) {
  const HostTensor& t = g.initializers.at(value);
  std::vector<double> v = t.to_f64();
  if (transpose) {  // [R, C] -> [C, R]
    int64_t r = shape[0], c = shape[1];
    std::vector<double> out(v.size());
    for (int64_t i = 0; i < r; ++i)
      for (int64_t j = 0; j < c; ++j) out[j * r + i] = v[i * c + j];
    v = std::move(out);
    shape = {c, r};
  }
  if (s == 1.0 && !transpose) return value;
  for (double& e : v) e *= s;
  return g.add_constant(value + (transpose ? ".T" : ".scaled"),
                        HostTensor::from_f64(t.dtype(), shape, v));
}

MappedNode map_dense(Graph& g, const Node& n) {
  MappedNode m;
  Workload& w = m.workload;
  w.op = "dense";
  std::vector<int64_t> a = dims_of(g, n.inputs[0]), b = dims_of(g, n.inputs[1]);
  node_check(a.size() == 2 && b.size() == 2)
      << "only 2-D operands are supported, got ranks " << a.size() << " and " << b.size();
  const bool gemm = n.op_type == "Gemm";
  node_check(!gemm || n.attr_int("transA", 0) == 0) << "transA = 1 is not supported";
  const bool trans_b = gemm && n.attr_int("transB", 0) != 0;
  const double alpha = gemm ? n.attr_float("alpha", 1.0f) : 1.0;
  const double beta = gemm ? n.attr_float("beta", 1.0f) : 1.0;
  const int64_t k = a[1], cols = trans_b ? b[0] : b[1];
  w.params["M"] = a[0], w.params["N"] = cols, w.params["K"] = k;
  std::string weight = n.inputs[1];
  if (trans_b || alpha != 1.0) {
    node_check(g.is_constant(weight)) << "transB or alpha needs a constant B";
    weight = scaled_constant(g, weight, alpha, b, trans_b);
  }
  m.operands = {{"A", n.inputs[0]}, {"B", weight}};
  if (gemm && n.has_input(2)) {
    const std::string& c = n.inputs[2];
    std::vector<int64_t> cd = dims_of(g, c);
    node_check(g.is_constant(c) && numel(cd) == cols && (cd.empty() || cd.back() == cols))
        << "C must be a constant bias over the " << cols << " output columns, got "
        << graph::shape_str(cd);
    w.epilogue.push_back("bias");
    m.operands["bias"] = scaled_constant(g, c, beta, {cols}, false);
  }
  add_epilogue(n, m);
  return m;
}

// Elementwise ops: "a", "b" padded to the output's rank with leading 1s.
MappedNode map_elementwise(const Graph& g, const Node& n, const std::string& op) {
  MappedNode m;
  Workload& w = m.workload;
  w.op = op;
  std::vector<int64_t> out = dims_of(g, n.outputs[0]);
  if (out.empty()) out = {1};
  node_check(out.size() <= 8) << "rank " << out.size() << " is more than the kernels' 8";
  w.params["rank"] = static_cast<int64_t>(out.size());
  const char* names[] = {"a", "b"};
  size_t operands = op == "clip" ? 1 : std::min<size_t>(n.inputs.size(), 2);
  for (size_t o = 0; o < operands; ++o) {
    std::vector<int64_t> d = dims_of(g, n.inputs[o]);
    d.insert(d.begin(), out.size() - d.size(), 1);
    for (size_t i = 0; i < d.size(); ++i) w.params[names[o] + std::to_string(i)] = d[i];
    m.operands[names[o]] = n.inputs[o];
  }
  return m;
}

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

MappedNode map_clip(Graph& g, const Node& n) {
  MappedNode m = map_elementwise(g, n, "clip");
  m.workload.params["lo_milli"] = clip_bound(g, n, 1, -1e12);
  m.workload.params["hi_milli"] = clip_bound(g, n, 2, 1e12);
  return m;
}

MappedNode map_pool(Graph& g, const Node& n) {
  MappedNode m;
  Workload& w = m.workload;
  w.op = n.op_type == "MaxPool" ? "max_pool2d" : "avg_pool2d";
  set_nchw(w, rank4_input(g, n));
  auto [kh, kw] = hw_attr(g, n, "kernel_shape", 1);
  auto [sh, sw] = hw_attr(g, n, "strides", 1);
  auto [dh, dw] = hw_attr(g, n, "dilations", 1);
  node_check(dh == 1 && dw == 1) << "dilated pooling is not supported";
  node_check(!n.has_output(1)) << "the Indices output is not supported";
  node_check(n.attr_int("storage_order", 0) == 0) << "storage_order 1 is not supported";
  auto [ph, pw] = hw_pads(g, n);
  w.params["KH"] = kh, w.params["KW"] = kw, w.params["SH"] = sh, w.params["SW"] = sw;
  w.params["PH"] = ph, w.params["PW"] = pw;
  w.params["ceil_mode"] = n.attr_int("ceil_mode", 0);
  if (n.op_type == "AveragePool") w.params["count_include_pad"] = n.attr_int("count_include_pad", 0);
  m.operands = {{"X", n.inputs[0]}};
  return m;
}

MappedNode map_global_avg_pool(Graph& g, const Node& n) {
  MappedNode m;
  m.workload.op = "global_avg_pool2d";
  set_nchw(m.workload, rank4_input(g, n));
  m.operands = {{"X", n.inputs[0]}};
  return m;
}

int64_t eps_e9(const Graph& g, const Node& n) {
  double eps = n.attr_float("epsilon", 1e-5f);
  int64_t e = std::llround(eps * 1e9);
  node_check(e > 0) << "epsilon " << eps << " is below the kernels' resolution of 1e-9";
  return e;
}

MappedNode map_batch_norm(Graph& g, const Node& n) {
  MappedNode m;
  m.workload.op = "batch_norm";
  set_nchw(m.workload, rank4_input(g, n));
  m.workload.params["eps_e9"] = eps_e9(g, n);
  for (size_t i = 1; i < n.outputs.size(); ++i)
    node_check(!n.has_output(i)) << "training-mode outputs are not supported";
  m.operands = {{"X", n.inputs[0]}, {"gamma", n.inputs[1]}, {"beta", n.inputs[2]},
                {"mean", n.inputs[3]}, {"var", n.inputs[4]}};
  return m;
}

// Softmax over the last axis as [M, N] rows.
MappedNode map_softmax(Graph& g, const Node& n) {
  std::vector<int64_t> x = dims_of(g, n.inputs[0]);
  const int64_t rank = static_cast<int64_t>(x.size());
  int64_t axis = n.attr_int("axis", g.opset >= 13 ? -1 : 1);
  if (axis < 0) axis += rank;
  node_check(rank >= 1 && axis == rank - 1)
      << "softmax over axis " << axis << " of a rank-" << rank
      << " tensor is not supported (only the last axis)";
  MappedNode m;
  m.workload.op = "softmax";
  m.workload.params["N"] = x.back();
  m.workload.params["M"] = numel(x) / x.back();
  m.operands = {{"X", n.inputs[0]}};
  return m;
}

// Flatten, Reshape, Squeeze, Unsqueeze: a copy into the new shape.
MappedNode map_reshape(Graph& g, const Node& n) {
  std::vector<int64_t> in = dims_of(g, n.inputs[0]), out = dims_of(g, n.outputs[0]);
  // The copy is flat whatever the shapes: above the kernel's rank 4, describe it as 1-D.
  if (in.empty() || in.size() > 4) in = {numel(in)};
  if (out.empty() || out.size() > 4) out = {numel(out)};
  MappedNode m;
  Workload& w = m.workload;
  w.op = "reshape";
  w.params["ndim"] = static_cast<int64_t>(in.size());
  w.params["ondim"] = static_cast<int64_t>(out.size());
  for (size_t i = 0; i < in.size(); ++i) w.params["D" + std::to_string(i)] = in[i];
  for (size_t i = 0; i < out.size(); ++i) w.params["O" + std::to_string(i)] = out[i];
  m.operands = {{"X", n.inputs[0]}};
  return m;
}

MappedNode map_concat(Graph& g, const Node& n) {
  std::vector<int64_t> out = dims_of(g, n.outputs[0]);
  const int64_t rank = static_cast<int64_t>(out.size());
  int64_t axis = n.attr_int("axis", 0);
  if (axis < 0) axis += rank;
  node_check(rank >= 1 && rank <= 4) << "concat of rank " << rank << " is not supported (1..4)";
  node_check(n.inputs.size() >= 2 && n.inputs.size() <= 4)
      << n.inputs.size() << " inputs are not supported (2..4)";
  MappedNode m;
  Workload& w = m.workload;
  w.op = "concat";
  w.params["ndim"] = rank, w.params["axis"] = axis;
  w.params["inputs"] = static_cast<int64_t>(n.inputs.size());
  for (int64_t i = 0; i < rank; ++i) w.params["D" + std::to_string(i)] = i == axis ? 1 : out[i];
  for (size_t k = 0; k < n.inputs.size(); ++k) {
    w.params["E" + std::to_string(k)] = dims_of(g, n.inputs[k])[axis];
    m.operands["X" + std::to_string(k)] = n.inputs[k];
  }
  return m;
}

// A coefficient in units of 1e-9, as the elementwise kernels take them.
int64_t e9(double v) { return std::llround(v * 1e9); }

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

int64_t normalized_axis(const Graph& g, const Node& n, int64_t axis, int64_t rank) {
  if (axis < 0) axis += rank;
  node_check(axis >= 0 && axis < rank) << "axis " << axis << " is out of range for rank " << rank;
  return axis;
}

// MatMul with numpy semantics. A constant 2-D B is a dense layer (A's leading dimensions are
// rows: the same row-major memory), with a bias when fuse_matmul_bias gave it a third input;
// a computed B (attention's Q.K^T and P.V) is a batched
// matmul over the leading dimensions, which both operands must share.
MappedNode map_matmul(Graph& g, const Node& n) {
  std::vector<int64_t> a = dims_of(g, n.inputs[0]), b = dims_of(g, n.inputs[1]);
  node_check(a.size() >= 2 && b.size() >= 2)
      << "1-D operands are not supported (ranks " << a.size() << " and " << b.size() << ")";
  const int64_t k = a.back(), cols = b.back();
  node_check(b[b.size() - 2] == k) << "inner dimensions differ: " << k << " and " << b[b.size() - 2];
  MappedNode m;
  Workload& w = m.workload;
  m.operands = {{"A", n.inputs[0]}, {"B", n.inputs[1]}};
  if (b.size() == 2 && g.is_constant(n.inputs[1])) {
    w.op = "dense";
    w.params["M"] = numel(a) / k, w.params["N"] = cols, w.params["K"] = k;
    if (n.has_input(2)) {  // a bias fused by fuse_matmul_bias
      w.epilogue.push_back("bias");
      m.operands["bias"] = n.inputs[2];
    }
    add_epilogue(n, m);
    return m;
  }
  node_check(n.epilogue.empty()) << "a fused epilogue on a batched MatMul is not supported";
  w.op = "batch_matmul";
  w.params["transpose_a"] = 0, w.params["transpose_b"] = 0;
  w.params["K"] = k, w.params["N"] = cols;
  if (b.size() == 2) {  // one shared B: every row of every batch of A is a row of one matmul
    w.params["B"] = 1, w.params["M"] = numel(a) / k;
    return m;
  }
  std::vector<int64_t> batch_a(a.begin(), a.end() - 2), batch_b(b.begin(), b.end() - 2);
  node_check(batch_a == batch_b) << "batch dimensions " << graph::shape_str(batch_a) << " and "
                                 << graph::shape_str(batch_b)
                                 << " differ (broadcasting batches is not supported)";
  w.params["B"] = numel(batch_a), w.params["M"] = a[a.size() - 2];
  return m;
}

// LayerNormalization over the axes from `axis` on, as [rows, columns].
MappedNode map_layer_norm(Graph& g, const Node& n) {
  std::vector<int64_t> x = dims_of(g, n.inputs[0]);
  const int64_t rank = static_cast<int64_t>(x.size());
  const int64_t axis = normalized_axis(g, n, n.attr_int("axis", -1), rank);
  node_check(!n.has_output(1) && !n.has_output(2))
      << "the Mean and InvStdDev outputs are not supported";
  int64_t cols = 1;
  for (int64_t i = axis; i < rank; ++i) cols *= x[i];
  node_check(numel(dims_of(g, n.inputs[1])) == cols)
      << "Scale must have the " << cols << " elements of the normalised axes";
  std::string bias = n.has_input(2) ? n.inputs[2] : "";
  if (bias.empty())
    bias = g.add_constant(n.outputs[0] + ".zero_bias",
                          HostTensor::from_f64(graph::DataType::f32(), {cols},
                                               std::vector<double>(cols, 0.0)));
  node_check(numel(dims_of(g, bias)) == cols)
      << "B must have the " << cols << " elements of the normalised axes";
  MappedNode m;
  m.workload.op = "layer_norm";
  m.workload.params["M"] = numel(x) / cols, m.workload.params["N"] = cols;
  m.workload.params["eps_e9"] = eps_e9(g, n);
  m.operands = {{"X", n.inputs[0]}, {"gamma", n.inputs[1]}, {"beta", bias}};
  return m;
}

// A strided window of X: start, step and extent per dimension.
struct Window {
  std::vector<int64_t> in, start, step, out;
};

// The same window with dimensions of extent 1 dropped and each dimension merged into the one
// before it when it is taken whole (the kernel then walks fewer, longer loops).
Window simplified(Window w) {
  Window s;
  for (size_t i = 0; i < w.in.size(); ++i) {
    if (w.in[i] == 1) continue;
    const bool whole = w.start[i] == 0 && w.step[i] == 1 && w.out[i] == w.in[i];
    if (!s.in.empty() && whole && s.step.back() == 1) {
      s.in.back() *= w.in[i], s.start.back() *= w.in[i], s.out.back() *= w.in[i];
      continue;
    }
    s.in.push_back(w.in[i]), s.start.push_back(w.start[i]), s.step.push_back(w.step[i]);
    s.out.push_back(w.out[i]);
  }
  if (s.in.empty()) s = {{1}, {0}, {1}, {1}};
  return s;
}

MappedNode map_window(const Graph& g, const Node& n, const Window& window) {
  Window s = simplified(window);
  node_check(s.in.size() <= 4) << "a slice of rank " << s.in.size()
                               << " (after merging whole dimensions) is not supported (1..4)";
  MappedNode m;
  Workload& w = m.workload;
  w.op = "slice";
  w.params["ndim"] = static_cast<int64_t>(s.in.size());
  for (size_t i = 0; i < s.in.size(); ++i) {
    const std::string d = std::to_string(i);
    w.params["D" + d] = s.in[i], w.params["S" + d] = s.start[i];
    w.params["T" + d] = s.step[i], w.params["O" + d] = s.out[i];
  }
  m.operands = {{"X", n.inputs[0]}};
  return m;
}

std::vector<int64_t> constant_ints(const Graph& g, const Node& n, size_t input, const char* what) {
  node_check(g.is_constant(n.inputs[input])) << what << " must be a constant";
  return g.initializers.at(n.inputs[input]).to_i64();
}

// Slice with positive steps (the window's extents are the inferred output's).
MappedNode map_slice(Graph& g, const Node& n) {
  std::vector<int64_t> x = dims_of(g, n.inputs[0]), y = dims_of(g, n.outputs[0]);
  const int64_t rank = static_cast<int64_t>(x.size());
  std::vector<int64_t> starts = constant_ints(g, n, 1, "starts");
  std::vector<int64_t> axes, steps(starts.size(), 1);
  if (n.has_input(3)) axes = constant_ints(g, n, 3, "axes");
  else
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  if (n.has_input(4)) steps = constant_ints(g, n, 4, "steps");
  Window w{x, std::vector<int64_t>(rank, 0), std::vector<int64_t>(rank, 1), y};
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t a = normalized_axis(g, n, axes[i], rank);
    node_check(steps[i] > 0) << "step " << steps[i] << " is not supported (only positive steps)";
    int64_t start = starts[i] < 0 ? starts[i] + x[a] : starts[i];
    w.start[a] = std::clamp<int64_t>(start, 0, x[a]);
    w.step[a] = steps[i];
  }
  node_check(numel(y) > 0) << "an empty slice is not supported";
  return map_window(g, n, w);
}

// Gather of constant indices that step evenly along the axis (one index, a range, every
// other row): a slice. Embedding lookups (computed indices) are not among them.
MappedNode map_gather(Graph& g, const Node& n) {
  std::vector<int64_t> x = dims_of(g, n.inputs[0]);
  const int64_t rank = static_cast<int64_t>(x.size());
  const int64_t axis = normalized_axis(g, n, n.attr_int("axis", 0), rank);
  std::vector<int64_t> idx = constant_ints(g, n, 1, "indices");
  node_check(!idx.empty()) << "empty indices are not supported";
  for (int64_t& i : idx) i = i < 0 ? i + x[axis] : i;
  const int64_t step = idx.size() > 1 ? idx[1] - idx[0] : 1;
  for (size_t i = 1; i < idx.size(); ++i)
    node_check(step > 0 && idx[i] - idx[i - 1] == step)
        << "indices must step evenly upwards (a strided slice), got " << idx[i - 1] << " then "
        << idx[i];
  Window w{x, std::vector<int64_t>(rank, 0), std::vector<int64_t>(rank, 1), x};
  w.start[axis] = idx[0], w.step[axis] = step, w.out[axis] = static_cast<int64_t>(idx.size());
  return map_window(g, n, w);
}

// Pad with a constant (mode "constant", no negative pads).
MappedNode map_pad(Graph& g, const Node& n) {
  node_check(n.attr_string("mode", "constant") == "constant")
      << "mode " << n.attr_string("mode", "constant") << " is not supported (only constant)";
  std::vector<int64_t> x = dims_of(g, n.inputs[0]);
  const int64_t rank = static_cast<int64_t>(x.size());
  node_check(rank >= 1 && rank <= 4) << "pad of rank " << rank << " is not supported (1..4)";
  std::vector<int64_t> pads = constant_ints(g, n, 1, "pads");
  std::vector<int64_t> axes;
  if (n.has_input(3)) axes = constant_ints(g, n, 3, "axes");
  else
    for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
  node_check(pads.size() == 2 * axes.size()) << "pads must have 2 values per padded axis";
  MappedNode m;
  Workload& w = m.workload;
  w.op = "pad";
  w.params["ndim"] = rank;
  for (int64_t i = 0; i < rank; ++i) {
    w.params["D" + std::to_string(i)] = x[i];
    w.params["B" + std::to_string(i)] = 0, w.params["A" + std::to_string(i)] = 0;
  }
  for (size_t i = 0; i < axes.size(); ++i) {
    const std::string a = std::to_string(normalized_axis(g, n, axes[i], rank));
    const int64_t before = pads[i], after = pads[i + axes.size()];
    node_check(before >= 0 && after >= 0) << "negative pads (cropping) are not supported";
    w.params["B" + a] = before, w.params["A" + a] = after;
  }
  double value = 0;
  if (n.has_input(2)) {
    node_check(g.is_constant(n.inputs[2])) << "constant_value must be a constant";
    value = g.initializers.at(n.inputs[2]).f64_at(0);
  }
  const double milli = value * 1000.0;
  node_check(std::abs(milli - std::round(milli)) < 1e-6 * std::max(1.0, std::abs(milli)))
      << "pad value " << value << " is not a multiple of 0.001 (the pad kernel's resolution)";
  w.params["value_e3"] = std::llround(milli);
  m.operands = {{"X", n.inputs[0]}};
  return m;
}

// ReduceSum / ReduceMean / ReduceMax over axes that are neighbours once extent-1 axes are
// ignored, as [outer, reduced, inner]; GlobalMaxPool is a max over H, W.
MappedNode map_reduce(Graph& g, const Node& n, const std::string& op) {
  std::vector<int64_t> x = dims_of(g, n.inputs[0]);
  const int64_t rank = static_cast<int64_t>(x.size());
  std::vector<bool> reduced(rank, false);
  if (n.op_type == "GlobalMaxPool") {
    for (int64_t i = 2; i < rank; ++i) reduced[i] = true;
  } else if (n.has_input(1) && g.initializers.count(n.inputs[1]) &&
             g.initializers.at(n.inputs[1]).numel() > 0) {
    for (int64_t a : constant_ints(g, n, 1, "axes")) reduced[normalized_axis(g, n, a, rank)] = true;
  } else {
    node_check(!n.has_input(1) || g.is_constant(n.inputs[1])) << "axes must be a constant";
    // No axes: every axis, unless noop_with_empty_axes says none.
    if (n.attr_int("noop_with_empty_axes", 0) == 0) reduced.assign(rank, true);
  }
  int64_t first = rank, last = -1;
  for (int64_t i = 0; i < rank; ++i)
    if (reduced[i] && x[i] > 1) first = std::min(first, i), last = i;
  int64_t outer = 1, count = 1, inner = 1;
  for (int64_t i = 0; i < rank; ++i) {
    if (i < first) outer *= x[i];
    else if (i > last) inner *= x[i];
    else {
      node_check(reduced[i] || x[i] == 1)
          << "reducing axes that are not neighbours (axis " << i << " lies between) is not supported";
      count *= x[i];
    }
  }
  MappedNode m;
  m.workload.op = op;
  m.workload.params["outer"] = outer, m.workload.params["reduced"] = count;
  m.workload.params["inner"] = inner;
  m.operands = {{"X", n.inputs[0]}};
  return m;
}

// Resize / Upsample of H and W of an NCHW tensor, nearest or linear.
MappedNode map_resize(Graph& g, const Node& n) {
  std::vector<int64_t> x = rank4_input(g, n), y = dims_of(g, n.outputs[0]);
  node_check(y[0] == x[0] && y[1] == x[1]) << "resizing N or C is not supported (only H and W)";
  const std::string mode = n.attr_string("mode", "nearest");
  node_check(mode == "nearest" || mode == "linear")
      << "mode " << mode << " is not supported (nearest, linear)";
  static const std::vector<std::string> kCoords = {"half_pixel", "pytorch_half_pixel",
                                                   "align_corners", "asymmetric",
                                                   "tf_half_pixel_for_nn"};
  static const std::vector<std::string> kNearest = {"round_prefer_floor", "round_prefer_ceil",
                                                    "floor", "ceil"};
  const std::string coord = n.attr_string("coordinate_transformation_mode", "half_pixel");
  const std::string nearest = n.attr_string("nearest_mode", "round_prefer_floor");
  auto code = [&](const std::vector<std::string>& names, const std::string& v, const char* what) {
    auto it = std::find(names.begin(), names.end(), v);
    std::string valid;
    for (const std::string& s : names) valid += (valid.empty() ? "" : ", ") + s;
    node_check(it != names.end()) << what << " " << v << " is not supported (" << valid << ")";
    return static_cast<int64_t>(it - names.begin());
  };
  node_check(n.attr_int("antialias", 0) == 0) << "antialias is not supported";
  // The scales the transformation divides by: given, or output / input in f32 as ONNX has it.
  std::vector<double> scales;
  if (n.has_input(2) && g.is_constant(n.inputs[2]) && g.initializers.at(n.inputs[2]).numel() > 0) {
    scales = g.initializers.at(n.inputs[2]).to_f64();
    node_check(scales.size() == 4) << "scales must have 4 values";
  } else {
    for (size_t i = 0; i < 4; ++i)
      scales.push_back(static_cast<float>(y[i]) / static_cast<float>(x[i]));
  }
  MappedNode m;
  Workload& w = m.workload;
  w.op = "resize";
  set_nchw(w, x);
  w.params["OH"] = y[2], w.params["OW"] = y[3];
  w.params["linear"] = mode == "linear" ? 1 : 0;
  w.params["coord"] = code(kCoords, coord, "coordinate_transformation_mode");
  w.params["nearest_mode"] = code(kNearest, nearest, "nearest_mode");
  w.params["scale_h_e9"] = e9(scales[2]), w.params["scale_w_e9"] = e9(scales[3]);
  m.operands = {{"X", n.inputs[0]}};
  return m;
}

// Transpose after dropping dimensions of extent 1 and merging input dimensions that stay
// neighbours in the same order (attention's rank-5 head shuffles become rank 3 or 4).
MappedNode map_transpose(Graph& g, const Node& n) {
  std::vector<int64_t> in = dims_of(g, n.inputs[0]);
  const int64_t rank = static_cast<int64_t>(in.size());
  std::vector<int64_t> perm = n.attr_ints("perm");
  if (perm.empty())
    for (int64_t i = rank - 1; i >= 0; --i) perm.push_back(i);
  node_check(static_cast<int64_t>(perm.size()) == rank) << "perm must have " << rank << " values";
  // Groups of input dimensions in output order: each a run of consecutive input dimensions.
  std::vector<std::vector<int64_t>> groups;
  for (int64_t p : perm) {
    if (in[p] == 1) continue;
    if (!groups.empty() && groups.back().back() + 1 == p) {
      groups.back().push_back(p);
      continue;
    }
    groups.push_back({p});
  }
  // A merged dimension may still be interrupted by dropped 1s in the input: that is fine,
  // extent-1 dimensions occupy no memory. Number the groups by their input position.
  std::vector<size_t> order(groups.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](size_t x, size_t y) { return groups[x].front() < groups[y].front(); });
  std::vector<int64_t> dims(groups.size()), new_perm(groups.size());
  for (size_t pos = 0; pos < order.size(); ++pos) {
    int64_t extent = 1;
    for (int64_t d : groups[order[pos]]) extent *= in[d];
    dims[pos] = extent;
    new_perm[order[pos]] = static_cast<int64_t>(pos);
  }
  if (dims.empty()) dims = {1}, new_perm = {0};
  node_check(dims.size() <= 4) << "transpose of rank " << dims.size()
                               << " (after merging dimensions) is not supported (1..4)";
  MappedNode m;
  m.workload.op = "transpose";
  m.workload.params["ndim"] = static_cast<int64_t>(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) {
    m.workload.params["D" + std::to_string(i)] = dims[i];
    m.workload.params["P" + std::to_string(i)] = new_perm[i];
  }
  m.operands = {{"X", n.inputs[0]}};
  return m;
}

const std::map<std::string, Mapper>& table() {
  auto unary = [](std::string op) {
    return [op](Graph& g, const Node& n) { return map_elementwise(g, n, op); };
  };
  auto reduction = [](std::string op) {
    return [op](Graph& g, const Node& n) { return map_reduce(g, n, op); };
  };
  static const std::map<std::string, Mapper> k = {
      {"Conv", map_conv},
      {"ConvTranspose", map_conv_transpose},
      {"Gemm", map_dense},
      {"MatMul", map_matmul},
      {"Relu", unary("relu")},
      {"Sigmoid", unary("sigmoid")},
      {"Tanh", unary("tanh")},
      {"Exp", unary("exp")},
      {"Log", unary("log")},
      {"Sqrt", unary("sqrt")},
      {"Neg", unary("neg")},
      {"Abs", unary("abs")},
      {"Reciprocal", unary("reciprocal")},
      {"Clip", map_clip},
      {"Add", unary("add")},
      {"Sub", unary("sub")},
      {"Mul", unary("mul")},
      {"Div", unary("div")},
      {"Pow", unary("pow")},
      {"Max", unary("max")},
      {"Min", unary("min")},
      {"MaxPool", map_pool},
      {"AveragePool", map_pool},
      {"GlobalAveragePool", map_global_avg_pool},
      {"BatchNormalization", map_batch_norm},
      {"Softmax", map_softmax},
      {"Flatten", map_reshape},
      {"Reshape", map_reshape},
      {"Squeeze", map_reshape},
      {"Unsqueeze", map_reshape},
      {"Concat", map_concat},
      {"Transpose", map_transpose},
      {"Erf", unary("erf")},
      {"Gelu", unary("gelu")},
      {"LeakyRelu", map_leaky_relu},
      {"HardSigmoid", map_hard_sigmoid},
      {"HardSwish", unary("hard_swish")},
      {"PRelu", unary("prelu")},
      {"LayerNormalization", map_layer_norm},
      {"Slice", map_slice},
      {"Gather", map_gather},
      {"Pad", map_pad},
      {"Resize", map_resize},
      {"ReduceSum", reduction("reduce_sum")},
      {"ReduceMean", reduction("reduce_mean")},
      {"ReduceMax", reduction("reduce_max")},
      {"GlobalMaxPool", reduction("reduce_max")},
      {"Cast", map_reshape},  // f32 to f32 (any other type is refused as every non-f32 value)
  };
  return k;
}

}  // namespace

MappedNode map_node(Graph& g, const Node& n) {
  auto it = table().find(n.op_type);
  if (it == table().end()) {
    std::string names;
    for (const std::string& s : supported_op_types()) names += (names.empty() ? "" : ", ") + s;
    user_error() << g.describe(n) << ": operator " << n.op_type
                 << " is not supported by kiln's kernels (supported: " << names << ")";
  }
  MappedNode m = it->second(g, n);
  // Operands are what the kernel reads (shape inputs such as Reshape's are not among them).
  for (const auto& [name, v] : m.operands) {
    std::optional<graph::ValueType> t = g.type_of(v);
    node_check(t && t->dtype == graph::DataType::f32())
        << "input '" << v << "' is " << (t ? t->dtype.str() : "untyped")
        << "; only f32 networks are supported";
  }
  return m;
}

std::vector<std::string> supported_op_types() {
  std::vector<std::string> out;
  for (const auto& [name, mapper] : table()) out.push_back(name);
  return out;
}

}  // namespace kiln::network
