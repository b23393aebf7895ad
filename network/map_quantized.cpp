// op_table mappers for the quantization operators: QuantizeLinear and DequantizeLinear of
// activations (quantize.flat, dequantize.flat) and the integer operators QLinearConv and
// QLinearMatMul and ONNX Runtime's QGemm (conv2d.int8, dense.int8), and QLinearAdd
// (qlinear_add.flat). What the kernels do
// not take (per-axis activation scales, asymmetric or uint8 weights, grouped convs) is one error
// naming the node.
#include <cmath>

#include "compiler/graph/ops/quantized_contrib.h"
#include "network/op_mapping.h"
#include "schedules/elementwise/qlinear_add.h"
#include "schedules/elementwise/quantize.h"

namespace kiln::network::mapping {

namespace {

bool is_8bit(graph::DataType t) {
  return t == graph::DataType::u8() || t == graph::DataType::i8();
}

// Input `i`, a constant of positive finite scales: one, or `channels` of them.
std::vector<double> scales(const Graph& g, const Node& n, size_t i, const char* what,
                           int64_t channels = 1) {
  node_check(n.has_input(i) && g.is_constant(n.inputs[i])) << what << " must be a constant";
  const std::vector<double> s = g.initializers.at(n.inputs[i]).to_f64();
  node_check(s.size() == 1 || static_cast<int64_t>(s.size()) == channels)
      << what << " has " << s.size() << " values, expected "
      << (channels > 1 ? "1 or " + std::to_string(channels)
                       : std::string("1 (activations are quantized per tensor)"));
  for (double v : s)
    node_check(v > 0 && std::isfinite(v)) << what << " must be positive, got " << v;
  return s;
}

// Input `i`, a constant zero point of one value (0 when omitted).
int64_t one_zero(const Graph& g, const Node& n, size_t i, const char* what) {
  if (!n.has_input(i)) return 0;
  const std::vector<int64_t> z = constant_ints(g, n, i, what);
  node_check(z.size() == 1) << what << " must be a single value (per-tensor quantization), got "
                            << z.size();
  return z[0];
}

graph::DataType dtype_of(const Graph& g, const std::string& v) {
  return g.type_of(v)->dtype;
}

// A new f32 constant of `values` named after `base`.
std::string add_constant(Graph& g, const std::string& base, const std::vector<double>& values) {
  std::string name = base;
  for (int i = 1; g.is_constant(name) || g.type_of(name); ++i)
    name = base + "." + std::to_string(i);
  g.initializers[name] = graph::HostTensor::from_f64(graph::DataType::f32(),
                                                     {static_cast<int64_t>(values.size())}, values);
  return name;
}

// The int8 operators' shared reading: x (input 0), x_scale, x_zero (1, 2), weights (3) with
// w_scale, w_zero (4, 5), y_scale, y_zero (6, 7). Sets a_zero, y_zero and requantize on the
// workload, checks the weights are constant int8 with zero point 0, and adds the
// requantization scales over `channels` as the operand "scale".
void quantized_operands(Graph& g, const Node& n, int64_t channels, MappedNode& m) {
  const graph::DataType xt = dtype_of(g, n.inputs[0]), yt = dtype_of(g, n.outputs[0]);
  node_check(is_8bit(xt)) << "input '" << n.inputs[0] << "' is " << xt.str()
                          << "; the int8 kernels take uint8 or int8 data";
  node_check(yt == xt) << "the output is " << yt.str() << " but the input is " << xt.str()
                       << "; the int8 kernels write their input's type";
  const std::string& w = n.inputs[3];
  node_check(g.is_constant(w)) << "weights '" << w << "' must be constant";
  node_check(g.initializers.at(w).dtype() == graph::DataType::i8())
      << "weights '" << w << "' are " << g.initializers.at(w).dtype().str()
      << "; the int8 kernels take int8 weights (symmetric quantization)";
  if (n.has_input(5))
    for (int64_t z : constant_ints(g, n, 5, "the weights' zero point"))
      node_check(z == 0) << "the weights' zero point is " << z
                         << "; the int8 kernels take symmetric weights (zero point 0)";
  const double sx = scales(g, n, 1, "the input scale")[0];
  const std::vector<double> sw = scales(g, n, 4, "the weight scale", channels);
  const double sy = scales(g, n, 6, "the output scale")[0];
  // In f32, as ONNX Runtime computes it (and the reference evaluator).
  std::vector<double> multiplier(static_cast<size_t>(channels));
  for (int64_t c = 0; c < channels; ++c)
    multiplier[c] = static_cast<float>(sx) * static_cast<float>(sw[sw.size() == 1 ? 0 : c]) /
                    static_cast<float>(sy);
  Workload& wl = m.workload;
  wl.dtype = xt;
  wl.params["a_zero"] = one_zero(g, n, 2, "the input zero point");
  wl.params["y_zero"] = one_zero(g, n, 7, "the output zero point");
  wl.params["requantize"] = 1;
  m.operands["scale"] = add_constant(g, n.outputs[0] + ".requantize_scale", multiplier);
}

// The int32 bias at input `i`, when present, as the kernel's "bias" epilogue operand.
void add_int32_bias(const Graph& g, const Node& n, size_t i, MappedNode& m) {
  if (!n.has_input(i)) return;
  node_check(g.is_constant(n.inputs[i])) << "the bias must be a constant";
  m.workload.epilogue.push_back("bias");
  m.operands["bias"] = n.inputs[i];
}

MappedNode map_conversion(Graph& g, const Node& n, bool quantize) {
  const char* op = quantize ? "quantize" : "dequantize";
  const std::string& q = quantize ? n.outputs[0] : n.inputs[0];
  const graph::DataType t = dtype_of(g, q);
  node_check(is_8bit(t)) << "'" << q << "' is " << t.str()
                         << "; kiln quantizes activations to uint8 or int8";
  node_check(!g.is_constant(n.inputs[0])) << "a constant input should have been folded";
  const std::vector<double> s = scales(g, n, 1, "the scale");
  const int64_t zero = one_zero(g, n, 2, "the zero point");
  MappedNode m;
  m.workload = schedules::quantize_workload(op, numel(dims_of(g, n.inputs[0])), t, s[0], zero);
  m.operands = {{"X", n.inputs[0]}};
  return m;
}

}  // namespace

MappedNode map_quantize(Graph& g, const Node& n) {
  return map_conversion(g, n, true);
}

MappedNode map_dequantize(Graph& g, const Node& n) {
  return map_conversion(g, n, false);
}

MappedNode map_qlinear_conv(Graph& g, const Node& n) {
  MappedNode m = conv_node(g, n, n.inputs[3]);
  const int64_t groups = m.workload.param("groups");
  node_check(groups == 1 || (groups == m.workload.param("C") && groups == m.workload.param("O")))
      << "grouped QLinearConv (group " << groups
      << ") is not supported by kiln's int8 kernels: groups 1 and depthwise only";
  quantized_operands(g, n, m.workload.param("O"), m);
  add_int32_bias(g, n, 8, m);
  return m;
}

MappedNode map_qlinear_matmul(Graph& g, const Node& n) {
  const std::vector<int64_t> a = dims_of(g, n.inputs[0]), b = dims_of(g, n.inputs[3]);
  node_check(b.size() == 2)
      << "B must be a constant 2-D matrix for the int8 dense kernel, got rank " << b.size();
  node_check(a.size() >= 2 && a.back() == b[0])
      << "A's last dimension must match B's rows (" << b[0] << ")";
  MappedNode m;
  m.workload.op = "dense";
  m.workload.params = {{"M", numel(a) / a.back()}, {"N", b[1]}, {"K", b[0]}};
  m.operands = {{"A", n.inputs[0]}, {"B", n.inputs[3]}};
  quantized_operands(g, n, b[1], m);
  return m;
}

MappedNode map_qgemm(Graph& g, const Node& n) {
  node_check(n.has_input(7)) << "a QGemm without y_scale (a float output) is expanded before "
                                "mapping; this one was not";
  node_check(n.attr_int("transA", 0) == 0) << "QGemm with transA=1 is not supported";
  const std::vector<int64_t> a = dims_of(g, n.inputs[0]);
  node_check(a.size() == 2) << "A must be 2-D, got rank " << a.size();
  node_check(g.is_constant(n.inputs[3])) << "B must be a constant";
  // The kernel reads B as [K, N]: a transposed B ([N, K]) becomes a constant of that layout.
  std::string b = n.inputs[3];
  const graph::HostTensor& bt = g.initializers.at(b);
  node_check(bt.shape().size() == 2) << "B must be 2-D";
  const int64_t r = bt.shape()[0], c = bt.shape()[1];
  if (n.attr_int("transB", 0) != 0) {
    const std::vector<int64_t> v = bt.to_i64();
    std::vector<int64_t> t(v.size());
    for (int64_t i = 0; i < r; ++i)
      for (int64_t j = 0; j < c; ++j) t[j * r + i] = v[i * c + j];
    b = g.add_constant(b + ".k_by_n", graph::HostTensor::from_i64(bt.dtype(), {c, r}, t));
  }
  const std::vector<int64_t> kn = g.initializers.at(b).shape();
  node_check(a[1] == kn[0]) << "A's columns (" << a[1] << ") must match B's rows (" << kn[0] << ")";
  // QLinearMatMul's inputs in order (QGemm has C between B's and the output's parameters).
  Node q = n;
  q.inputs = {n.inputs[0], n.inputs[1], n.inputs[2], b,
              n.inputs[4], n.inputs[5], n.inputs[7], n.has_input(8) ? n.inputs[8] : ""};
  MappedNode m;
  m.workload.op = "dense";
  m.workload.params = {{"M", a[0]}, {"N", kn[1]}, {"K", kn[0]}};
  m.operands = {{"A", n.inputs[0]}, {"B", b}};
  quantized_operands(g, q, kn[1], m);
  add_int32_bias(g, n, 6, m);
  return m;
}

MappedNode map_qlinear_add(Graph& g, const Node& n) {
  const graph::DataType t = dtype_of(g, n.inputs[0]);
  node_check(is_8bit(t) && dtype_of(g, n.inputs[3]) == t && dtype_of(g, n.outputs[0]) == t)
      << "A, B and C must be one 8-bit type (uint8 or int8), got " << t.str() << ", "
      << dtype_of(g, n.inputs[3]).str() << " and " << dtype_of(g, n.outputs[0]).str();
  const std::vector<int64_t> a = dims_of(g, n.inputs[0]), b = dims_of(g, n.inputs[3]);
  node_check(a == b) << "A and B must have one shape (kiln's QLinearAdd does not broadcast)";
  const graph::ScaledAdd s = graph::qlinear_add_ratios(
      scales(g, n, 1, "A_scale")[0], scales(g, n, 4, "B_scale")[0], scales(g, n, 6, "C_scale")[0],
      one_zero(g, n, 2, "A's zero point"), one_zero(g, n, 5, "B's zero point"),
      one_zero(g, n, 7, "C's zero point"));
  MappedNode m;
  m.workload = schedules::qlinear_add_workload(numel(a), t, {s.a_ratio, s.b_ratio, s.offset});
  m.operands = {{"A", n.inputs[0]}, {"B", n.inputs[3]}};
  return m;
}

}  // namespace kiln::network::mapping
