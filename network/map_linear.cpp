// op_table mappers for the operators with weights: Conv, ConvTranspose, Gemm, MatMul
// (with the epilogues fused into their nodes).
#include <algorithm>
#include <cmath>

#include "compiler/graph/rewrites/fuse_attention.h"
#include "network/op_mapping.h"

namespace kiln::network::mapping {

MappedNode conv_node(Graph& g, const Node& n, const std::string& weight) {
  MappedNode m;
  Workload& w = m.workload;
  w.op = "conv2d";
  std::vector<int64_t> x = rank4_input(g, n), k = dims_of(g, weight);
  set_nchw(w, x);
  w.params["O"] = k[0], w.params["KH"] = k[2], w.params["KW"] = k[3];
  auto [sh, sw] = hw_attr(g, n, "strides", 1);
  auto [dh, dw] = hw_attr(g, n, "dilations", 1);
  auto [ph, pw] = hw_pads(g, n);
  w.params["SH"] = sh, w.params["SW"] = sw, w.params["DH"] = dh, w.params["DW"] = dw;
  w.params["PH"] = ph, w.params["PW"] = pw;
  w.params["groups"] = n.attr_int("group", 1);
  m.operands = {{"data", n.inputs[0]}, {"weight", weight}};
  return m;
}

MappedNode map_conv(Graph& g, const Node& n) {
  MappedNode m = conv_node(g, n, n.inputs[1]);
  Workload& w = m.workload;
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
      int64_t total =
          strides[i] * (x[2 + i] - 1) + out_pad[i] + (k[2 + i] - 1) * dils[i] + 1 - y[2 + i];
      pads[i] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      node_check(total >= 0) << "output size " << y[2 + i] << " along " << (i ? "W" : "H")
                             << " is larger than the input, strides and kernel make ("
                             << y[2 + i] + total << "); padding the output is not supported";
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

namespace {

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

}  // namespace

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

// MatMul with numpy semantics. A constant 2-D B is a dense layer (A's leading dimensions are
// rows: the same row-major memory), with a bias when fuse_matmul_bias gave it a third input;
// a computed B (attention's Q.K^T and P.V) is a batched
// matmul over the leading dimensions, which both operands must share.
MappedNode map_matmul(Graph& g, const Node& n) {
  std::vector<int64_t> a = dims_of(g, n.inputs[0]), b = dims_of(g, n.inputs[1]);
  node_check(a.size() >= 2 && b.size() >= 2)
      << "1-D operands are not supported (ranks " << a.size() << " and " << b.size() << ")";
  const int64_t k = a.back(), cols = b.back();
  node_check(b[b.size() - 2] == k)
      << "inner dimensions differ: " << k << " and " << b[b.size() - 2];
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

MappedNode map_attention(Graph& g, const Node& n) {
  std::vector<int64_t> q = dims_of(g, n.inputs[0]), kt = dims_of(g, n.inputs[1]),
                       v = dims_of(g, n.inputs[2]);
  const size_t r = q.size();
  node_check(r >= 2 && kt.size() == r && v.size() == r && q[r - 1] == kt[r - 2] &&
             kt[r - 1] == v[r - 2] && std::equal(q.begin(), q.end() - 2, kt.begin()) &&
             std::equal(q.begin(), q.end() - 2, v.begin()))
      << "Q " << graph::shape_str(q) << ", Kt " << graph::shape_str(kt) << " and V "
      << graph::shape_str(v) << " are not one attention's shapes";
  MappedNode m;
  Workload& w = m.workload;
  w.op = "attention";
  w.params["B"] = numel(std::vector<int64_t>(q.begin(), q.end() - 2));
  w.params["M"] = q[r - 2], w.params["D"] = q[r - 1], w.params["N"] = kt[r - 1];
  w.params["E"] = v[r - 1];
  m.operands = {{"Q", n.inputs[0]}, {"Kt", n.inputs[1]}, {"V", n.inputs[2]}};
  if (n.has_input(3)) {
    std::vector<int64_t> scores(q.begin(), q.end() - 1);
    scores.push_back(kt[r - 1]);
    std::optional<graph::AttentionMask> f = graph::attention_mask_form(scores, dims_of(g, n.inputs[3]));
    node_check(f.has_value()) << "mask " << graph::shape_str(dims_of(g, n.inputs[3]))
                              << " does not broadcast over the scores " << graph::shape_str(scores)
                              << " as the kernel reads masks";
    w.params["mask"] = 1, w.params["mask_batches"] = f->batches;
    w.params["mask_every"] = f->every, w.params["mask_rows"] = f->rows;
    m.operands["Mask"] = n.inputs[3];
  }
  return m;
}

}  // namespace kiln::network::mapping
