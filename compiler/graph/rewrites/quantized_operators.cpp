#include "compiler/graph/rewrites/quantized_operators.h"

#include <cmath>
#include <limits>
#include <optional>
#include <set>

#include "compiler/graph/evaluate.h"
#include "compiler/graph/ops/quantize.h"
#include "compiler/graph/rewrites/graph_match.h"
#include "compiler/graph/rewrites/qlinear_to_float.h"
#include "compiler/graph/rewrites/quant_params.h"

namespace kiln::graph {

namespace {

// int8 weights (zero point 0) dequantized per tensor or along `axis` of `channels`.
std::optional<QuantOperand> weight_params(const Graph& g, const Node& n, int64_t axis,
                                          int64_t channels) {
  if (!is_quantized_weight(g, n)) return std::nullopt;
  std::optional<QuantOperand> p = quant_operand(g, n);
  if (!p || g.initializers.at(n.inputs[0]).dtype() != DataType::i8()) return std::nullopt;
  for (int64_t z : p->zeros)
    if (z != 0) return std::nullopt;
  if (p->scales.size() != 1) {
    const int64_t rank = static_cast<int64_t>(g.initializers.at(n.inputs[0]).shape().size());
    int64_t a = n.attr_int("axis", 1);
    if (a < 0) a += rank;
    if (a != axis || static_cast<int64_t>(p->scales.size()) != channels) return std::nullopt;
  }
  return p;
}

// The int32 bias of a fused Conv with data scale sx and weight scales sw: an int32 constant
// dequantized with (about) sx * sw, or an f32 constant quantized with that scale, as ONNX
// Runtime's quantizer writes it; "" when the bias is neither (the Conv keeps its float path).
std::string int32_bias(Graph& g, const std::string& bias, double sx, const std::vector<double>& sw,
                       int64_t channels, std::set<std::string>& interior) {
  auto scale = [&](int64_t o) {
    return double(static_cast<float>(sx) * static_cast<float>(sw[sw.size() == 1 ? 0 : o]));
  };
  if (const Node* dq = producer_op(g, bias, "DequantizeLinear")) {
    std::optional<QuantOperand> p = quant_operand(g, *dq);
    if (!p || !g.is_constant(dq->inputs[0]) ||
        g.initializers.at(dq->inputs[0]).dtype() != DataType::i32())
      return "";
    for (int64_t z : p->zeros)
      if (z != 0) return "";
    for (int64_t o = 0; o < channels; ++o) {
      const double s = p->scales[p->scales.size() == 1 ? 0 : o];
      if (std::fabs(s - scale(o)) > 1e-6 * scale(o)) return "";
    }
    if (only_reader(g, bias)) interior.insert(bias);
    return dq->inputs[0];
  }
  if (!g.is_constant(bias)) return "";
  const std::vector<double> b = g.initializers.at(bias).to_f64();
  if (static_cast<int64_t>(b.size()) != channels) return "";
  std::vector<int64_t> q(b.size());
  for (int64_t o = 0; o < channels; ++o) {
    const double v = std::nearbyint(b[o] / scale(o));
    if (!(std::fabs(v) < 2147483647.0)) return "";
    q[o] = static_cast<int64_t>(v);
  }
  return g.add_constant(bias + ".int32", HostTensor::from_i64(DataType::i32(), {channels}, q));
}

// The site of one rewrite: the float operator between a DQ'd activation and a Q, and the
// Relu between them when there is one.
struct Site {
  const Node* op;
  const Node* dq_x;
  const Node* dq_w;
  const Node* relu;  // or nullptr
  const Node* q;
};

// The DQ -> op [-> Relu] -> Q around float operator `op`, or nothing.
std::optional<Site> site_of(const Graph& g, const Node& op) {
  if (op.op_type != "Conv" && op.op_type != "MatMul" && op.op_type != "Gemm") return std::nullopt;
  // A Gemm as the int8 dense kernel computes it: A [M, K] as it is, a bias added once.
  if (op.op_type == "Gemm" &&
      (op.attr_int("transA", 0) != 0 || op.attr_float("alpha", 1.0f) != 1.0f ||
       op.attr_float("beta", 1.0f) != 1.0f))
    return std::nullopt;
  if (!op.epilogue.empty() || !op.has_input(0) || !op.has_input(1)) return std::nullopt;
  const Node* dq_x = producer_op(g, op.inputs[0], "DequantizeLinear");
  const Node* dq_w = producer_op(g, op.inputs[1], "DequantizeLinear");
  const Node* relu = only_reader(g, op.outputs[0]);
  if (relu && (relu->op_type != "Relu" || !relu->epilogue.empty())) relu = nullptr;
  const std::string& result = relu ? relu->outputs[0] : op.outputs[0];
  const Node* q = only_reader(g, result);
  if (!dq_x || !dq_w || !q || q->op_type != "QuantizeLinear" || q->inputs[0] != result)
    return std::nullopt;
  return Site{&op, dq_x, dq_w, relu, q};
}

// The fused node of a site (its inputs set), or nothing when the kernels cannot take it.
std::optional<Node> fuse(Graph& g, const Site& s, bool depthwise, const KeepFloat& keep_float,
                         std::set<std::string>& interior) {
  const Node& op = *s.op;
  std::optional<QuantOperand> px = activation_quant(g, *s.dq_x), py = activation_quant(g, *s.q);
  if (!px || !py || px->type != py->type) return std::nullopt;  // the kernel writes its data type
  // A Relu before the Q is exactly the Q's saturation when its zero point is the type's least
  // value (Q(relu(v)) = Q(v) then); any other zero point keeps the float path.
  const int64_t type_min = py->type == DataType::u8() ? 0 : -128;
  if (s.relu && py->zero_value() != type_min) return std::nullopt;
  const auto w_type = g.type_of(op.inputs[1]);
  if (!w_type || !w_type->is_concrete()) return std::nullopt;
  const std::vector<int64_t> wd = w_type->dims();
  const bool conv = op.op_type == "Conv", gemm = op.op_type == "Gemm";
  if (conv && wd.size() != 4) return std::nullopt;
  const int64_t groups = conv ? op.attr_int("group", 1) : 1;
  // Depthwise: one input channel per group, one output channel per group.
  if (groups != 1 && !(depthwise && wd[1] == 1 && wd[0] == groups)) return std::nullopt;
  if (!conv && wd.size() != 2) return std::nullopt;
  // Output channels: a conv weight's rows, a MatMul's columns, a Gemm's columns or (transB)
  // rows.
  const bool rows = conv || (gemm && op.attr_int("transB", 0) != 0);
  const int64_t channels = rows ? wd[0] : wd[1];
  std::optional<QuantOperand> pw = weight_params(g, *s.dq_w, rows ? 0 : 1, channels);
  if (!pw) return std::nullopt;
  if (conv && keep_float && !keep_float(g, op).empty()) return std::nullopt;

  Node fused;
  fused.op_type = conv ? "QLinearConv" : gemm ? "QGemm" : "QLinearMatMul";
  if (conv) fused.attrs = op.attrs;
  if (gemm) fused.attrs["transB"] = op.attr_int("transB", 0);
  fused.inputs = {s.dq_x->inputs[0], px->scale, zero_point_input(g, *px, op.outputs[0] + ".x"),
                  s.dq_w->inputs[0], pw->scale, zero_point_input(g, *pw, op.outputs[0] + ".w")};
  std::string bias;
  if ((conv || gemm) && op.has_input(2)) {
    bias = int32_bias(g, op.inputs[2], px->scales[0], pw->scales, channels, interior);
    if (bias.empty()) return std::nullopt;
  }
  if (gemm) fused.inputs.push_back(bias);  // QGemm's C comes before the output's scale
  fused.inputs.push_back(py->scale);
  fused.inputs.push_back(zero_point_input(g, *py, op.outputs[0] + ".y"));
  if (conv && !bias.empty()) fused.inputs.push_back(bias);
  interior.insert(op.outputs[0]);
  if (s.relu) interior.insert(s.relu->outputs[0]);
  for (const Node* dq : {s.dq_x, s.dq_w})
    if (only_reader(g, dq->outputs[0])) interior.insert(dq->outputs[0]);
  return fused;
}

// Folds the weight DequantizeLinears no operator took into f32 constants.
void fold_weight_dequantizations(Graph& g) {
  std::vector<Node> kept;
  for (Node& n : g.nodes) {
    if (!is_quantized_weight(g, n)) {
      kept.push_back(std::move(n));
      continue;
    }
    std::vector<HostTensor> out = evaluate_node(g, n, [&](const std::string& name) {
      auto it = g.initializers.find(name);
      return it == g.initializers.end() ? nullptr : &it->second;
    });
    g.types.erase(n.outputs[0]);
    g.initializers[n.outputs[0]] = std::move(out.at(0));
  }
  g.nodes = std::move(kept);
}

}  // namespace

int fuse_quantized_operators(Graph& g, bool depthwise, const KeepFloat& keep_float) {
  // QLinearConvs kept in float become the QDQ form first; their Convs stay float below.
  const std::set<std::string> float_convs = expand_float_qlinear_convs(g, keep_float);
  // Sites first, by the Q's output (replace_pattern moves nodes).
  std::vector<std::string> outs;
  for (const Node& n : g.nodes)
    if (std::optional<Site> s = site_of(g, n); s && !float_convs.count(s->op->outputs[0]))
      outs.push_back(s->q->outputs[0]);
  int fused = 0;
  for (const std::string& out : outs) {
    const Node* q = producer_node(g, out);
    const Node* op = q ? producer_node(g, q->inputs[0]) : nullptr;
    if (op && op->op_type == "Relu") op = producer_node(g, op->inputs[0]);
    std::optional<Site> s = op ? site_of(g, *op) : std::nullopt;
    if (!s) continue;
    std::set<std::string> interior;
    std::optional<Node> node = fuse(g, *s, depthwise, keep_float, interior);
    if (!node) continue;
    replace_pattern(g, out, std::move(*node), interior);
    ++fused;
  }
  fold_weight_dequantizations(g);
  return fused;
}

}  // namespace kiln::graph
