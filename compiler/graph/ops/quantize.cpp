// Quantization: QuantizeLinear, DequantizeLinear and DynamicQuantizeLinear (the QDQ form of a
// quantized model), and the integer operators of the QOperator form: MatMulInteger,
// ConvInteger, QLinearMatMul and QLinearConv. These definitions are the exact reference the
// int8 kernels are checked against, so they follow ONNX to the bit: products accumulate
// exactly (int32 range, held in int64 or in double, where every such integer is exact),
// requantization divides or scales in float as ONNX Runtime does, rounds half to even and
// saturates to the output type. Scales must be positive and finite and zero points inside
// their type: anything else is a UserError, never a silently wrong model.
#include <cmath>
#include <limits>
#include <optional>

#include "compiler/graph/ops/quantize.h"

#include "compiler/graph/ops/op_util.h"

namespace kiln::graph {

namespace {

QuantRange quant_range(DataType t, const char* what) {
  const std::optional<QuantRange> r = quantized_range(t);
  user_check(r.has_value()) << what << " has element type " << t.str()
                            << ", expected uint8, int8, uint16 or int16";
  return *r;
}

// A scale is positive and finite; `what` names it in the error ("scale", "y_scale").
void check_scale(double s, const char* what) {
  user_check(std::isfinite(s) && s > 0) << what << " " << s << " is not positive and finite";
}

// Zero points lie inside their type.
void check_zero_points(const std::vector<int64_t>& zero, DataType type) {
  const QuantRange r = quant_range(type, "a zero point");
  for (int64_t z : zero)
    user_check(z >= r.lo && z <= r.hi) << "zero point " << z << " is outside its type";
}

int64_t saturate(double v, QuantRange r) {
  return static_cast<int64_t>(std::min<double>(r.hi, std::max<double>(r.lo, v)));
}

// A scale and zero point, one per tensor or one per slice along `axis`.
struct QuantParams {
  std::vector<double> scale;
  std::vector<int64_t> zero_point;  // empty: 0
  int64_t axis = -1;                // the per-axis dimension, -1 for per-tensor
  int64_t zero(size_t i) const {
    return zero_point.empty() ? 0 : zero_point[zero_point.size() == 1 ? 0 : i];
  }
  double scale_at(size_t i) const { return scale[scale.size() == 1 ? 0 : i]; }
};

// Checks the scale (input `si`) and zero point (input `zi`, optional) of a tensor of `shape`:
// scalars, or 1-D along the node's "axis" (default 1) matching that dimension.
int64_t param_axis(const InferContext& ctx, size_t si, size_t zi, const std::vector<int64_t>& shape) {
  const std::vector<int64_t>& s = ctx.shape(si);
  if (const HostTensor* scale = ctx.value(si))  // a constant scale is checked at compile time
    for (double v : scale->to_f64()) check_scale(v, "scale");
  const bool per_axis = !s.empty() && !(s.size() == 1 && s[0] == 1);
  if (ctx.has_input(zi))
    user_check(ctx.shape(zi) == s) << "the zero point's shape " << shape_str(ctx.shape(zi))
                                   << " differs from the scale's " << shape_str(s);
  if (!per_axis) return -1;
  user_check(s.size() == 1) << "a per-axis scale must be 1-D, got " << shape_str(s);
  const int64_t axis = normalize_axis(ctx.node().attr_int("axis", 1),
                                      static_cast<int64_t>(shape.size()));
  user_check(shape[axis] == s[0]) << "the scale has " << s[0] << " values for axis " << axis
                                  << " of size " << shape[axis] << " (shape " << shape_str(shape)
                                  << ")";
  return axis;
}

QuantParams read_params(const EvalContext& ctx, size_t si, size_t zi, int64_t axis,
                        DataType zero_type) {
  QuantParams q;
  q.axis = axis;
  q.scale = ctx.input(si).to_f64();
  for (double s : q.scale) check_scale(s, "scale");
  if (ctx.has_input(zi)) {
    q.zero_point = ctx.input(zi).to_i64();
    // An int32 input's zero point is checked to be 0 by its caller.
    if (zero_type != DataType::i32()) check_zero_points(q.zero_point, zero_type);
  }
  return q;
}

// The index along `axis` of each flat element of `shape` (0 for every one when axis < 0).
std::vector<size_t> slice_index(const std::vector<int64_t>& shape, int64_t axis) {
  const int64_t n = shape_numel(shape);
  std::vector<size_t> at(static_cast<size_t>(n), 0);
  if (axis < 0) return at;
  int64_t inner = 1;
  for (size_t d = axis + 1; d < shape.size(); ++d) inner *= shape[d];
  for (int64_t i = 0; i < n; ++i) at[i] = static_cast<size_t>((i / inner) % shape[axis]);
  return at;
}

// ---- QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear

DataType quantized_type(const InferContext& ctx) {
  return ctx.has_input(2) ? ctx.dtype(2) : DataType::u8();
}

std::vector<TensorType> infer_quantize(const InferContext& ctx) {
  require_float(ctx, 0);
  quant_range(quantized_type(ctx), "QuantizeLinear's output");
  param_axis(ctx, 1, 2, ctx.shape(0));
  return {{quantized_type(ctx), ctx.shape(0)}};
}

std::vector<HostTensor> eval_quantize(const EvalContext& ctx) {
  const InferContext ictx = ctx.infer_context();
  const DataType out = quantized_type(ictx);
  const QuantRange r = quant_range(out, "QuantizeLinear's output");
  const std::vector<int64_t>& shape = ctx.input(0).shape();
  const QuantParams q = read_params(ctx, 1, 2, param_axis(ictx, 1, 2, shape), out);
  const std::vector<size_t> at = slice_index(shape, q.axis);
  const std::vector<double> x = ctx.input(0).to_f64();
  std::vector<int64_t> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    // x / scale in float, as ONNX Runtime divides, then rounded half to even.
    const float v = static_cast<float>(x[i]) / static_cast<float>(q.scale_at(at[i]));
    y[i] = saturate(std::nearbyint(static_cast<double>(v)) + static_cast<double>(q.zero(at[i])), r);
  }
  return {HostTensor::from_i64(out, shape, y)};
}

std::vector<TensorType> infer_dequantize(const InferContext& ctx) {
  if (ctx.dtype(0) != DataType::i32()) quant_range(ctx.dtype(0), "DequantizeLinear's input");
  require_float(ctx, 1);
  if (ctx.has_input(2)) require_same_dtype(ctx, 0, 2);
  param_axis(ctx, 1, 2, ctx.shape(0));
  return {{ctx.dtype(1), ctx.shape(0)}};
}

std::vector<HostTensor> eval_dequantize(const EvalContext& ctx) {
  const InferContext ictx = ctx.infer_context();
  const std::vector<int64_t>& shape = ctx.input(0).shape();
  const DataType in = ctx.input(0).dtype();
  QuantParams q = read_params(ctx, 1, 2, param_axis(ictx, 1, 2, shape), in);
  if (in == DataType::i32())
    for (int64_t z : q.zero_point) user_check(z == 0) << "an int32 input's zero point must be 0";
  const std::vector<size_t> at = slice_index(shape, q.axis);
  const std::vector<int64_t> x = ctx.input(0).to_i64();
  std::vector<double> y(x.size());
  for (size_t i = 0; i < x.size(); ++i)
    y[i] = static_cast<float>(x[i] - q.zero(at[i])) * static_cast<float>(q.scale_at(at[i]));
  return {HostTensor::from_f64(ctx.input(1).dtype(), shape, y)};
}

std::vector<TensorType> infer_dynamic_quantize(const InferContext& ctx) {
  user_check(ctx.dtype(0) == DataType::f32())
      << "DynamicQuantizeLinear takes float32, got " << ctx.dtype(0).str();
  return {{DataType::u8(), ctx.shape(0)}, {DataType::f32(), {}}, {DataType::u8(), {}}};
}

std::vector<HostTensor> eval_dynamic_quantize(const EvalContext& ctx) {
  const std::vector<double> x = ctx.input(0).to_f64();
  float lo = 0, hi = 0;  // the range always holds 0, so that 0 is exact
  for (double v : x) {
    lo = std::min(lo, static_cast<float>(v));
    hi = std::max(hi, static_cast<float>(v));
  }
  const float scale = (hi - lo) / 255.0f;
  const QuantRange r{0, 255};
  // All zeros: any scale represents them; ONNX's formula would divide by zero.
  const int64_t zero = scale > 0 ? saturate(std::nearbyint(static_cast<double>(-lo / scale)), r) : 0;
  std::vector<int64_t> y(x.size(), 0);
  if (scale > 0)
    for (size_t i = 0; i < x.size(); ++i)
      y[i] = saturate(
          std::nearbyint(static_cast<double>(static_cast<float>(x[i]) / scale)) + double(zero), r);
  return {HostTensor::from_i64(DataType::u8(), ctx.input(0).shape(), y),
          HostTensor::from_f64(DataType::f32(), {}, {scale}),
          HostTensor::from_i64(DataType::u8(), {}, {zero})};
}

// ---- Integer products: the float operator evaluated on exact integers

// `t` minus its zero point (one per slice along `axis` of the tensor, or one for all), as an
// f64 tensor of exact integers: the float Conv and MatMul evaluate on it without rounding.
HostTensor shifted(const HostTensor& t, const std::vector<int64_t>& zero, int64_t axis) {
  const std::vector<size_t> at = slice_index(t.shape(), zero.size() > 1 ? axis : -1);
  const std::vector<int64_t> v = t.to_i64();
  std::vector<double> out(v.size());
  for (size_t i = 0; i < v.size(); ++i)
    out[i] = static_cast<double>(v[i] - (zero.empty() ? 0 : zero[zero.size() > 1 ? at[i] : 0]));
  return HostTensor::from_f64(DataType::f64(), t.shape(), out);
}

std::vector<int64_t> zero_points(const EvalContext& ctx, size_t i, DataType of) {
  if (!ctx.has_input(i)) return {};
  std::vector<int64_t> z = ctx.input(i).to_i64();
  check_zero_points(z, of);
  return z;
}

// Runs the float operator `op` of this node's attributes on `inputs` (f64 tensors).
HostTensor run_float_op(const EvalContext& ctx, const char* op, std::vector<const HostTensor*> inputs) {
  Node n = ctx.node();
  n.op_type = op;
  n.inputs.assign(inputs.size(), "x");
  return find_op(op)->eval(EvalContext(n, std::move(inputs))).at(0);
}

// The per-row zero point of a MatMul's A runs along its rows (axis rank-2), B's per column
// (axis rank-1); a conv weight's per output channel (axis 0).
int64_t row_axis(const HostTensor& t) { return static_cast<int64_t>(t.shape().size()) - 2; }
int64_t column_axis(const HostTensor& t) { return static_cast<int64_t>(t.shape().size()) - 1; }

void require_integer_operands(const InferContext& ctx, size_t a, size_t b) {
  quant_range(ctx.dtype(a), "the first operand");
  quant_range(ctx.dtype(b), "the second operand");
}

std::vector<TensorType> int32_result(const InferContext& ctx, const char* op, size_t a, size_t b) {
  Node n = ctx.node();
  n.op_type = op;
  std::vector<std::optional<TensorType>> types = {TensorType{DataType::f64(), ctx.shape(a)},
                                                  TensorType{DataType::f64(), ctx.shape(b)}};
  n.inputs.assign(2, "x");
  TensorType t = find_op(op)->infer(InferContext(n, types, {nullptr, nullptr})).at(0);
  t.dtype = DataType::i32();
  return {t};
}

HostTensor to_i32(const HostTensor& exact) {
  std::vector<int64_t> v;
  for (double d : exact.to_f64()) v.push_back(static_cast<int64_t>(d));
  return HostTensor::from_i64(DataType::i32(), exact.shape(), v);
}

std::vector<HostTensor> eval_matmul_integer(const EvalContext& ctx) {
  const HostTensor &a = ctx.input(0), &b = ctx.input(1);
  const HostTensor sa = shifted(a, zero_points(ctx, 2, a.dtype()), row_axis(a));
  const HostTensor sb = shifted(b, zero_points(ctx, 3, b.dtype()), column_axis(b));
  return {to_i32(run_float_op(ctx, "MatMul", {&sa, &sb}))};
}

std::vector<HostTensor> eval_conv_integer(const EvalContext& ctx) {
  const HostTensor &x = ctx.input(0), &w = ctx.input(1);
  const std::vector<int64_t> xz = zero_points(ctx, 2, x.dtype());
  user_check(xz.size() <= 1) << "ConvInteger's input zero point must be a scalar";
  const HostTensor sx = shifted(x, xz, -1);
  const HostTensor sw = shifted(w, zero_points(ctx, 3, w.dtype()), 0);
  return {to_i32(run_float_op(ctx, "Conv", {&sx, &sw}))};
}

// Requantizes exact integer products `acc`: round(acc * a_scale * b_scale[j] / y_scale) + y_zero,
// saturated, with j the index along `b_axis` of the result (-1: one scale).
HostTensor requantize(const HostTensor& acc, double a_scale, const std::vector<double>& b_scale,
                      int64_t b_axis, double y_scale, int64_t y_zero, DataType out) {
  const QuantRange r = quant_range(out, "the output");
  const std::vector<size_t> at = slice_index(acc.shape(), b_scale.size() > 1 ? b_axis : -1);
  const std::vector<double> v = acc.to_f64();
  std::vector<int64_t> y(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    const float multiplier = static_cast<float>(a_scale) *
                             static_cast<float>(b_scale[b_scale.size() > 1 ? at[i] : 0]) /
                             static_cast<float>(y_scale);
    const float scaled = static_cast<float>(v[i]) * multiplier;
    y[i] = saturate(std::nearbyint(static_cast<double>(scaled)) + static_cast<double>(y_zero), r);
  }
  return HostTensor::from_i64(out, acc.shape(), y);
}

double one_scale(const EvalContext& ctx, size_t i, const char* what) {
  const std::vector<double> s = ctx.input(i).to_f64();
  user_check(s.size() == 1) << what << " must be a single value, got " << s.size();
  check_scale(s[0], what);
  return s[0];
}

std::vector<double> scales(const EvalContext& ctx, size_t i, size_t expected, const char* what) {
  std::vector<double> s = ctx.input(i).to_f64();
  user_check(s.size() == 1 || s.size() == expected)
      << what << " has " << s.size() << " values, expected 1 or " << expected;
  for (double v : s) check_scale(v, what);
  return s;
}

int64_t one_zero(const EvalContext& ctx, size_t i, DataType of) {
  const std::vector<int64_t> z = zero_points(ctx, i, of);
  user_check(z.size() <= 1) << "the output zero point must be a single value";
  return z.empty() ? 0 : z[0];
}

// QLinearMatMul: a, a_scale, a_zero, b, b_scale, b_zero, y_scale, y_zero.
std::vector<TensorType> infer_qlinear_matmul(const InferContext& ctx) {
  require_integer_operands(ctx, 0, 3);
  std::vector<TensorType> t = int32_result(ctx, "MatMul", 0, 3);
  t[0].dtype = ctx.dtype(7);
  quant_range(t[0].dtype, "QLinearMatMul's output");
  return t;
}

std::vector<HostTensor> eval_qlinear_matmul(const EvalContext& ctx) {
  const HostTensor &a = ctx.input(0), &b = ctx.input(3);
  const HostTensor sa = shifted(a, zero_points(ctx, 2, a.dtype()), row_axis(a));
  const HostTensor sb = shifted(b, zero_points(ctx, 5, b.dtype()), column_axis(b));
  const HostTensor acc = run_float_op(ctx, "MatMul", {&sa, &sb});
  const int64_t n = b.shape().back();
  return {requantize(acc, one_scale(ctx, 1, "a_scale"), scales(ctx, 4, n, "b_scale"),
                     column_axis(acc), one_scale(ctx, 6, "y_scale"),
                     one_zero(ctx, 7, ctx.input(7).dtype()), ctx.input(7).dtype())};
}

// QLinearConv: x, x_scale, x_zero, w, w_scale, w_zero, y_scale, y_zero, optional int32 bias.
std::vector<TensorType> infer_qlinear_conv(const InferContext& ctx) {
  require_integer_operands(ctx, 0, 3);
  std::vector<TensorType> t = int32_result(ctx, "Conv", 0, 3);
  t[0].dtype = ctx.dtype(7);
  quant_range(t[0].dtype, "QLinearConv's output");
  if (ctx.has_input(8))
    user_check(ctx.dtype(8) == DataType::i32()) << "QLinearConv's bias must be int32";
  return t;
}

std::vector<HostTensor> eval_qlinear_conv(const EvalContext& ctx) {
  const HostTensor &x = ctx.input(0), &w = ctx.input(3);
  const std::vector<int64_t> xz = zero_points(ctx, 2, x.dtype());
  user_check(xz.size() <= 1) << "QLinearConv's input zero point must be a single value";
  const HostTensor sx = shifted(x, xz, -1);
  const HostTensor sw = shifted(w, zero_points(ctx, 5, w.dtype()), 0);
  std::vector<const HostTensor*> inputs = {&sx, &sw};
  std::optional<HostTensor> bias;
  if (ctx.has_input(8)) {
    bias = HostTensor::from_f64(DataType::f64(), ctx.input(8).shape(), ctx.input(8).to_f64());
    inputs.push_back(&*bias);
  }
  const HostTensor acc = run_float_op(ctx, "Conv", inputs);
  return {requantize(acc, one_scale(ctx, 1, "x_scale"), scales(ctx, 4, w.shape().at(0), "w_scale"),
                     1, one_scale(ctx, 6, "y_scale"), one_zero(ctx, 7, ctx.input(7).dtype()),
                     ctx.input(7).dtype())};
}

}  // namespace

std::vector<HostTensor> eval_qgemm(const EvalContext& ctx) {
  const HostTensor &a = ctx.input(0), &b = ctx.input(3);
  const Node& n = ctx.node();
  user_check(n.attr_int("transA", 0) == 0) << "QGemm with transA=1 is not supported";
  const bool b_rows = n.attr_int("transB", 0) != 0;  // B is [N, K]
  const HostTensor sa = shifted(a, zero_points(ctx, 2, a.dtype()), row_axis(a));
  const HostTensor sb = shifted(b, zero_points(ctx, 5, b.dtype()), b_rows ? 0 : 1);
  std::vector<const HostTensor*> inputs = {&sa, &sb};
  std::optional<HostTensor> c;
  if (ctx.has_input(6)) {
    user_check(ctx.input(6).dtype() == DataType::i32()) << "QGemm's C must be int32";
    c = HostTensor::from_f64(DataType::f64(), ctx.input(6).shape(), ctx.input(6).to_f64());
    inputs.push_back(&*c);
  }
  const HostTensor acc = run_float_op(ctx, "Gemm", inputs);
  const DataType out = ctx.has_input(8) ? ctx.input(8).dtype() : a.dtype();
  const int64_t columns = b.shape().at(b_rows ? 0 : 1);
  return {requantize(acc, one_scale(ctx, 1, "a_scale"), scales(ctx, 4, columns, "b_scale"),
                     column_axis(acc), one_scale(ctx, 7, "y_scale"), one_zero(ctx, 8, out), out)};
}

std::optional<QuantRange> quantized_range(DataType t) {
  if (t == DataType::u8()) return QuantRange{0, 255};
  if (t == DataType::i8()) return QuantRange{-128, 127};
  if (t == DataType::u16()) return QuantRange{0, 65535};
  if (t == DataType::i16()) return QuantRange{-32768, 32767};
  return std::nullopt;
}

bool is_quantized_weight(const Graph& g, const Node& n) {
  if (n.op_type != "DequantizeLinear" || !n.has_input(0) || !g.is_constant(n.inputs[0])) return false;
  for (const std::string& in : n.inputs)
    if (!in.empty() && !g.is_constant(in)) return false;
  const DataType t = g.initializers.at(n.inputs[0]).dtype();
  return t == DataType::i8() || t == DataType::u8();
}

void add_quantize_ops(OpList& ops) {
  OpDef q{"QuantizeLinear", {"axis", "saturate"}, 2, 3};
  q.infer = infer_quantize;
  q.eval = eval_quantize;
  ops.push_back(std::move(q));
  OpDef dq{"DequantizeLinear", {"axis"}, 2, 3};
  dq.infer = infer_dequantize;
  dq.eval = eval_dequantize;
  ops.push_back(std::move(dq));
  OpDef dyn{"DynamicQuantizeLinear", {}, 1, 1, 3, 3};
  dyn.infer = infer_dynamic_quantize;
  dyn.eval = eval_dynamic_quantize;
  ops.push_back(std::move(dyn));

  OpDef mm{"MatMulInteger", {}, 2, 4};
  mm.infer = [](const InferContext& ctx) {
    require_integer_operands(ctx, 0, 1);
    return int32_result(ctx, "MatMul", 0, 1);
  };
  mm.eval = eval_matmul_integer;
  ops.push_back(std::move(mm));
  const std::vector<std::string> conv_attrs = {"auto_pad", "dilations", "group", "kernel_shape",
                                               "pads", "strides"};
  OpDef conv{"ConvInteger", conv_attrs, 2, 4};
  conv.infer = [](const InferContext& ctx) {
    require_integer_operands(ctx, 0, 1);
    return int32_result(ctx, "Conv", 0, 1);
  };
  conv.eval = eval_conv_integer;
  ops.push_back(std::move(conv));
  OpDef qmm{"QLinearMatMul", {}, 8, 8};
  qmm.infer = infer_qlinear_matmul;
  qmm.eval = eval_qlinear_matmul;
  ops.push_back(std::move(qmm));
  OpDef qconv{"QLinearConv", conv_attrs, 8, 9};
  qconv.infer = infer_qlinear_conv;
  qconv.eval = eval_qlinear_conv;
  ops.push_back(std::move(qconv));
}

}  // namespace kiln::graph
