#include "compiler/graph/ops/quantized_contrib.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "compiler/graph/ops/op.h"
#include "compiler/graph/ops/op_util.h"
#include "compiler/graph/ops/quantize.h"

namespace kiln::graph {

namespace {

const std::vector<std::string> kPoolAttrs = {"auto_pad",     "ceil_mode", "count_include_pad",
                                             "kernel_shape", "pads",      "strides"};

// The float operator, the attributes it takes from the node, the node's own attributes, and
// the input counts.
struct Definition {
  const char* float_op;
  std::vector<std::string> float_attrs, own_attrs;
  int min_inputs, max_inputs;
};

const std::map<std::string, Definition>& definitions() {
  static const std::map<std::string, Definition> k = {
      {"QLinearAdd", {"Add", {}, {}, 7, 8}},
      {"QLinearMul", {"Mul", {}, {}, 7, 8}},
      {"QLinearSigmoid", {"Sigmoid", {}, {}, 4, 5}},
      {"QLinearLeakyRelu", {"LeakyRelu", {"alpha"}, {}, 4, 5}},
      {"QLinearGlobalAveragePool", {"GlobalAveragePool", {}, {"channels_last"}, 4, 5}},
      {"QLinearAveragePool", {"AveragePool", kPoolAttrs, {"channels_last"}, 4, 5}},
      {"QLinearConcat", {"Concat", {"axis"}, {}, 5, -1}},
      {"QGemm", {"Gemm", {"alpha", "transA", "transB"}, {}, 6, 9}},
  };
  return k;
}

std::vector<std::string> accepted_attrs(const std::string& op) {
  const Definition& d = definitions().at(op);
  std::vector<std::string> a = d.float_attrs;
  a.insert(a.end(), d.own_attrs.begin(), d.own_attrs.end());
  return a;
}

// ---- the reference: dequantize, the float operator, quantize

Node part_node(const Node& n, const std::string& op, size_t inputs) {
  Node p;
  p.name = n.name;
  p.op_type = op;
  p.inputs.assign(inputs, "x");
  p.outputs = {"y"};
  return p;
}

Node float_node(const Node& n, const QuantizedContribParts& parts, size_t inputs) {
  Node f = part_node(n, parts.float_op, inputs);
  for (const std::string& a : parts.float_attrs)
    if (n.has_attr(a)) f.attrs[a] = n.attrs.at(a);
  if (parts.float_op == "Gemm") f.attrs["beta"] = 1.0f;
  return f;
}

// QLinearAdd as ONNX Runtime's kernel computes it (per-tensor parameters, as it takes them).
HostTensor eval_scaled_add(const EvalContext& ctx) {
  auto one = [&](size_t i) -> const HostTensor& {
    user_check(ctx.input(i).numel() == 1)
        << "QLinearAdd's scales and zero points are single values; input " << i << " has "
        << ctx.input(i).numel();
    return ctx.input(i);
  };
  auto zero = [&](size_t i) { return ctx.has_input(i) ? one(i).to_i64()[0] : int64_t{0}; };
  const ScaledAdd s = qlinear_add_ratios(one(1).to_f64()[0], one(4).to_f64()[0], one(6).to_f64()[0],
                                         zero(2), zero(5), zero(7));
  const DataType t = ctx.input(0).dtype();
  const int64_t lo = t == DataType::u8() ? 0 : -128, hi = t == DataType::u8() ? 255 : 127;
  return zip_i64(ctx.input(0), ctx.input(3), t,
                 [&](int64_t a, int64_t b) { return std::clamp(scaled_add(s, a, b), lo, hi); });
}

void check_node(const Node& n) {
  user_check(n.attr_int("channels_last", 0) == 0)
      << n.op_type << " with channels_last=1 is not supported (NCHW data only)";
  if (n.op_type == "QGemm")
    user_check(n.attr_float("alpha", 1.0f) == 1.0f)
        << "QGemm with alpha " << n.attr_float("alpha", 1.0f)
        << " is not supported (its bias would be scaled differently)";
}

std::vector<TensorType> infer_contrib(const InferContext& ctx) {
  const Node& n = ctx.node();
  check_node(n);
  const QuantizedContribParts parts = quantized_contrib_parts(n);
  std::vector<std::optional<TensorType>> types;
  for (const auto& o : parts.operands) {
    const DataType t = ctx.dtype(o.value);
    user_check(t == DataType::u8() || t == DataType::i8())
        << n.op_type << "'s operand " << o.value << " is " << t.str() << ", expected uint8 or int8";
    types.push_back(TensorType{DataType::f32(), ctx.shape(o.value)});
  }
  if (parts.int32_bias && ctx.has_input(*parts.int32_bias)) {
    user_check(ctx.dtype(*parts.int32_bias) == DataType::i32()) << "QGemm's C must be int32";
    types.push_back(TensorType{DataType::f32(), ctx.shape(*parts.int32_bias)});
  }
  const Node f = float_node(n, parts, types.size());
  TensorType out =
      find_op(parts.float_op)
          ->infer(InferContext(f, types, std::vector<const HostTensor*>(types.size(), nullptr)))
          .at(0);
  if (!parts.y) return {{DataType::f32(), out.shape}};
  const size_t zero = (*parts.y)[1];
  out.dtype = ctx.has_input(zero) ? ctx.dtype(zero) : ctx.dtype(parts.operands[0].value);
  return {out};
}

HostTensor run(const Node& n, std::vector<const HostTensor*> inputs) {
  return find_op(n.op_type)->eval(EvalContext(n, std::move(inputs))).at(0);
}

std::vector<HostTensor> eval_contrib(const EvalContext& ctx) {
  const Node& n = ctx.node();
  if (n.op_type == "QLinearAdd") return {eval_scaled_add(ctx)};
  if (n.op_type == "QGemm" && ctx.has_input(7)) return eval_qgemm(ctx);  // integer, exact
  const QuantizedContribParts parts = quantized_contrib_parts(n);
  std::vector<HostTensor> values;
  values.reserve(parts.operands.size() + 1);
  for (const auto& o : parts.operands) {
    Node dq = part_node(n, "DequantizeLinear", 3);
    if (ctx.input(o.scale).numel() > 1) dq.attrs["axis"] = o.axis;
    values.push_back(run(dq, {&ctx.input(o.value), &ctx.input(o.scale),
                              ctx.has_input(o.zero) ? &ctx.input(o.zero) : nullptr}));
  }
  if (parts.int32_bias && ctx.has_input(*parts.int32_bias)) {
    // C in units of a_scale * b_scale (per column where b's scale is), products in f32.
    const HostTensor& c = ctx.input(*parts.int32_bias);
    const std::vector<double> sa = ctx.input(parts.operands[0].scale).to_f64();
    const std::vector<double> sb = ctx.input(parts.operands[1].scale).to_f64();
    std::vector<double> v = c.to_f64();
    for (size_t i = 0; i < v.size(); ++i) {
      const float s = static_cast<float>(sa[0]) * static_cast<float>(sb[sb.size() == 1 ? 0 : i]);
      v[i] = double(static_cast<float>(v[i]) * s);
    }
    values.push_back(HostTensor::from_f64(DataType::f32(), c.shape(), v));
  }
  std::vector<const HostTensor*> ptrs;
  for (const HostTensor& v : values) ptrs.push_back(&v);
  HostTensor y = run(float_node(n, parts, ptrs.size()), ptrs);
  if (!parts.y) return {std::move(y)};
  const auto [scale, zero] = *parts.y;
  return {run(part_node(n, "QuantizeLinear", 3),
              {&y, &ctx.input(scale), ctx.has_input(zero) ? &ctx.input(zero) : nullptr})};
}

}  // namespace

ScaledAdd qlinear_add_ratios(double a_scale, double b_scale, double y_scale, int64_t a_zero,
                             int64_t b_zero, int64_t y_zero) {
  const float a_ratio = static_cast<float>(a_scale) / static_cast<float>(y_scale);
  const float b_ratio = static_cast<float>(b_scale) / static_cast<float>(y_scale);
  const float zeros =
      std::fma(a_ratio, static_cast<float>(a_zero), b_ratio * static_cast<float>(b_zero));
  return {a_ratio, b_ratio, static_cast<float>(y_zero) - zeros};
}

int64_t scaled_add(const ScaledAdd& s, int64_t a, int64_t b) {
  const float v = std::fma(static_cast<float>(a), s.a_ratio,
                           std::fma(static_cast<float>(b), s.b_ratio, s.offset));
  return static_cast<int64_t>(std::nearbyint(v));
}

bool is_quantized_contrib_op(const std::string& op_type) {
  return definitions().count(op_type) > 0;
}

std::vector<std::string> quantized_contrib_ops() {
  std::vector<std::string> out;
  for (const auto& [name, d] : definitions()) out.push_back(name);
  return out;
}

QuantizedContribParts quantized_contrib_parts(const Node& n) {
  const Definition& d = definitions().at(n.op_type);
  QuantizedContribParts p;
  p.float_op = d.float_op;
  p.float_attrs = d.float_attrs;
  if (n.op_type == "QLinearConcat") {
    // y_scale, y_zero_point, then (x, scale, zero point) per input.
    for (size_t i = 2; i < n.inputs.size(); i += 3) p.operands.push_back({i, i + 1, i + 2});
    p.y = std::array<size_t, 2>{0, 1};
  } else if (n.op_type == "QGemm") {
    // A, a_scale, a_zp, B, b_scale, b_zp, C, y_scale, y_zp; b's scale per output column.
    p.operands = {{0, 1, 2}, {3, 4, 5, n.attr_int("transB", 0) != 0 ? 0 : 1}};
    p.int32_bias = 6;
    if (n.has_input(7)) p.y = std::array<size_t, 2>{7, 8};
  } else if (d.max_inputs == 8) {  // binary: A, A_scale, A_zp, B, B_scale, B_zp, C_scale, C_zp
    p.operands = {{0, 1, 2}, {3, 4, 5}};
    p.y = std::array<size_t, 2>{6, 7};
  } else {  // unary: X, X_scale, X_zp, Y_scale, Y_zp
    p.operands = {{0, 1, 2}};
    p.y = std::array<size_t, 2>{3, 4};
  }
  return p;
}

void add_quantized_contrib_ops(OpList& ops) {
  for (const auto& [name, d] : definitions()) {
    OpDef op{name, accepted_attrs(name), d.min_inputs, d.max_inputs};
    op.infer = infer_contrib;
    op.eval = eval_contrib;
    ops.push_back(std::move(op));
  }
}

}  // namespace kiln::graph
