// Elementwise math: unary functions, broadcasting arithmetic (Add, Sub, Mul, Div, Pow, Mod,
// Min, Max, Sum, Mean), comparisons, logic and IsNaN/IsInf (to bool), Where, Cast, Identity,
// Dropout (inference).
#include <cmath>
#include <limits>

#include "compiler/graph/ops/op_util.h"

namespace kiln::graph {

namespace {

using Unary = double (*)(double);

// Wrapping integer arithmetic: i64 overflow is undefined in C++, defined modulo 2^64 here.
int64_t wrap_add(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
int64_t wrap_sub(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}
int64_t wrap_mul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}

double nan_min(double a, double b) {
  return std::isnan(a) || std::isnan(b) ? NAN : std::min(a, b);
}
double nan_max(double a, double b) {
  return std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b);
}

std::vector<TensorType> same_as_input0(const InferContext& ctx) {
  return {ctx.input(0)};
}

// A function of floating-point tensors only (Exp, Sqrt, Erf...).
OpDef float_unary(std::string type, Unary fn) {
  OpDef def{std::move(type)};
  def.infer = [](const InferContext& ctx) {
    require_float(ctx, 0);
    return same_as_input0(ctx);
  };
  def.eval = [fn](const EvalContext& ctx) -> std::vector<HostTensor> {
    const HostTensor& x = ctx.input(0);
    return {map_f64(x, x.dtype(), fn)};
  };
  return def;
}

// A function of any numeric tensor, with an integer form for integer tensors (Neg, Abs).
OpDef numeric_unary(std::string type, Unary float_fn, int64_t (*int_fn)(int64_t)) {
  OpDef def{std::move(type)};
  def.infer = same_as_input0;
  def.eval = [float_fn, int_fn](const EvalContext& ctx) -> std::vector<HostTensor> {
    const HostTensor& x = ctx.input(0);
    if (is_float_dtype(x.dtype())) return {map_f64(x, x.dtype(), float_fn)};
    return {map_i64(x, x.dtype(), int_fn)};
  };
  return def;
}

using FloatBinary = std::function<double(double, double)>;
using IntBinary = std::function<int64_t(int64_t, int64_t)>;

// A broadcasting binary operator whose operands share one element type.
OpDef arithmetic(std::string type, FloatBinary float_fn, IntBinary int_fn) {
  OpDef def{std::move(type)};
  def.min_inputs = def.max_inputs = 2;
  def.infer = [](const InferContext& ctx) -> std::vector<TensorType> {
    require_same_dtype(ctx, 0, 1);
    return {{ctx.dtype(0), broadcast_shapes(ctx.shape(0), ctx.shape(1))}};
  };
  def.eval = [float_fn, int_fn](const EvalContext& ctx) -> std::vector<HostTensor> {
    const HostTensor &a = ctx.input(0), &b = ctx.input(1);
    if (is_float_dtype(a.dtype())) return {zip_f64(a, b, a.dtype(), float_fn)};
    return {zip_i64(a, b, a.dtype(), int_fn)};
  };
  return def;
}

// Min, Max, Sum, Mean: one or more inputs of one element type, broadcast together.
OpDef variadic(std::string type, FloatBinary float_fn, IntBinary int_fn, bool mean) {
  OpDef def{std::move(type)};
  def.max_inputs = -1;
  def.infer = [](const InferContext& ctx) -> std::vector<TensorType> {
    std::vector<int64_t> shape = ctx.shape(0);
    for (size_t i = 1; i < ctx.num_inputs(); ++i) {
      require_same_dtype(ctx, 0, i);
      shape = broadcast_shapes(shape, ctx.shape(i));
    }
    return {{ctx.dtype(0), shape}};
  };
  def.eval = [float_fn, int_fn, mean](const EvalContext& ctx) -> std::vector<HostTensor> {
    HostTensor acc = ctx.input(0);
    const DataType t = acc.dtype();
    const bool is_float = is_float_dtype(t);
    // Accumulate in f64 so that a Sum or Mean of f16 inputs rounds once.
    if (is_float) acc = HostTensor::from_f64(DataType::f64(), acc.shape(), acc.to_f64());
    for (size_t i = 1; i < ctx.num_inputs(); ++i)
      acc = is_float ? zip_f64(acc, ctx.input(i), DataType::f64(), float_fn)
                     : zip_i64(acc, ctx.input(i), t, int_fn);
    const double n = static_cast<double>(ctx.num_inputs());
    if (mean && is_float) return {map_f64(acc, t, [n](double v) { return v / n; })};
    if (mean) return {map_i64(acc, t, [n](int64_t v) { return static_cast<int64_t>(v / n); })};
    if (is_float) return {map_f64(acc, t, [](double v) { return v; })};
    return {acc};
  };
  return def;
}

// Comparisons: two operands of one type, a bool result.
OpDef comparison(std::string type, bool (*cmp)(double, double), bool (*int_cmp)(int64_t, int64_t)) {
  OpDef def{std::move(type)};
  def.min_inputs = def.max_inputs = 2;
  def.infer = [](const InferContext& ctx) -> std::vector<TensorType> {
    require_same_dtype(ctx, 0, 1);
    return {{DataType::boolean(), broadcast_shapes(ctx.shape(0), ctx.shape(1))}};
  };
  def.eval = [cmp, int_cmp](const EvalContext& ctx) -> std::vector<HostTensor> {
    const HostTensor &a = ctx.input(0), &b = ctx.input(1);
    if (is_float_dtype(a.dtype()))
      return {zip_f64(a, b, DataType::boolean(), [cmp](double x, double y) { return cmp(x, y); })};
    return {zip_i64(a, b, DataType::boolean(),
                    [int_cmp](int64_t x, int64_t y) { return int64_t{int_cmp(x, y)}; })};
  };
  return def;
}

// And, Or, Xor: bool operands.
OpDef logical(std::string type, bool (*fn)(bool, bool)) {
  OpDef def{std::move(type)};
  def.min_inputs = def.max_inputs = 2;
  def.infer = [](const InferContext& ctx) -> std::vector<TensorType> {
    for (size_t i = 0; i < 2; ++i)
      user_check(ctx.dtype(i).is_bool())
          << ctx.node().op_type << " needs bool inputs, got " << ctx.dtype(i).str();
    return {{DataType::boolean(), broadcast_shapes(ctx.shape(0), ctx.shape(1))}};
  };
  def.eval = [fn](const EvalContext& ctx) -> std::vector<HostTensor> {
    return {zip_i64(ctx.input(0), ctx.input(1), DataType::boolean(),
                    [fn](int64_t a, int64_t b) { return int64_t{fn(a != 0, b != 0)}; })};
  };
  return def;
}

int64_t int_div(int64_t a, int64_t b) {
  user_check(b != 0) << "integer division by zero";
  if (a == std::numeric_limits<int64_t>::min() && b == -1) return a;  // wraps
  return a / b;
}

int64_t int_pow(int64_t base, int64_t exp) {
  if (exp < 0) return base == 1 ? 1 : (base == -1 ? (exp % 2 ? -1 : 1) : 0);
  int64_t r = 1;
  for (; exp > 0; exp >>= 1, base = wrap_mul(base, base))
    if (exp & 1) r = wrap_mul(r, base);
  return r;
}

OpDef pow_op() {
  OpDef def{"Pow"};
  def.min_inputs = def.max_inputs = 2;
  // Since opset 12 the exponent may have another type than the base; the result has the
  // base's type.
  def.infer = [](const InferContext& ctx) -> std::vector<TensorType> {
    return {{ctx.dtype(0), broadcast_shapes(ctx.shape(0), ctx.shape(1))}};
  };
  def.eval = [](const EvalContext& ctx) -> std::vector<HostTensor> {
    const HostTensor &a = ctx.input(0), &b = ctx.input(1);
    if (!is_float_dtype(a.dtype()) && !is_float_dtype(b.dtype()))
      return {zip_i64(a, b, a.dtype(), int_pow)};
    return {zip_f64(a, b, a.dtype(), [](double x, double y) { return std::pow(x, y); })};
  };
  return def;
}

std::vector<TensorType> infer_where(const InferContext& ctx) {
  user_check(ctx.dtype(0).is_bool()) << "Where needs a bool condition, got " << ctx.dtype(0).str();
  require_same_dtype(ctx, 1, 2);
  return {
      {ctx.dtype(1), broadcast_shapes(ctx.shape(0), broadcast_shapes(ctx.shape(1), ctx.shape(2)))}};
}

template <typename C>
std::vector<C> select(const std::vector<int64_t>& cond, const std::vector<C>& x,
                      const std::vector<C>& y, const EvalContext& ctx,
                      const std::vector<int64_t>& shape) {
  std::vector<C> out(shape_numel(shape));
  for_each_index(
      shape,
      {broadcast_strides(ctx.input(0).shape(), shape),
       broadcast_strides(ctx.input(1).shape(), shape),
       broadcast_strides(ctx.input(2).shape(), shape)},
      [&](int64_t o, const int64_t* off) { out[o] = cond[off[0]] ? x[off[1]] : y[off[2]]; });
  return out;
}

std::vector<HostTensor> eval_where(const EvalContext& ctx) {
  const TensorType out = infer_where(ctx.infer_context())[0];
  const std::vector<int64_t> cond = ctx.input(0).to_i64();
  const HostTensor &x = ctx.input(1), &y = ctx.input(2);
  if (is_float_dtype(out.dtype))
    return {HostTensor::from_f64(out.dtype, out.shape,
                                 select(cond, x.to_f64(), y.to_f64(), ctx, out.shape))};
  return {HostTensor::from_i64(out.dtype, out.shape,
                               select(cond, x.to_i64(), y.to_i64(), ctx, out.shape))};
}

// Converts between element types: float to integer truncates toward zero, anything to bool
// is "non-zero".
HostTensor cast(const HostTensor& x, DataType to) {
  if (is_float_dtype(x.dtype())) return HostTensor::from_f64(to, x.shape(), x.to_f64());
  return HostTensor::from_i64(to, x.shape(), x.to_i64());
}

OpDef cast_op() {
  OpDef def{"Cast", {"to", "saturate"}};
  // The importer turns ONNX's numeric `to` into kiln's type name ("f32", "i64", "bool").
  def.infer = [](const InferContext& ctx) -> std::vector<TensorType> {
    return {{ir::parse_data_type(ctx.node().attr_string("to", "")), ctx.shape(0)}};
  };
  def.eval = [](const EvalContext& ctx) -> std::vector<HostTensor> {
    return {cast(ctx.input(0), ir::parse_data_type(ctx.node().attr_string("to", "")))};
  };
  return def;
}

OpDef cast_like_op() {
  OpDef def{"CastLike", {"saturate"}, 2, 2};
  def.infer = [](const InferContext& ctx) -> std::vector<TensorType> {
    return {{ctx.dtype(1), ctx.shape(0)}};
  };
  def.eval = [](const EvalContext& ctx) -> std::vector<HostTensor> {
    return {cast(ctx.input(0), ctx.input(1).dtype())};
  };
  return def;
}

OpDef identity_op() {
  OpDef def{"Identity"};
  def.infer = same_as_input0;
  def.eval = [](const EvalContext& ctx) -> std::vector<HostTensor> { return {ctx.input(0)}; };
  return def;
}

// Dropout in inference: the output is the input and the optional mask is all true. So is
// training mode with a ratio of 0, which drops nothing (exporters write that for attention
// dropout left at p = 0, as torchvision's Swin does).
OpDef dropout_op() {
  OpDef def{"Dropout", {"seed", "ratio", "is_test"}, 1, 3, 1, 2};
  def.infer = [](const InferContext& ctx) -> std::vector<TensorType> {
    const HostTensor* ratio = ctx.value(1);
    const bool drops_nothing = ratio && ratio->numel() == 1 && ratio->f64_at(0) == 0;
    if (const HostTensor* training = ctx.value(2))
      user_check(training->numel() == 1 && (training->i64_at(0) == 0 || drops_nothing))
          << "Dropout in training mode is not supported (kiln compiles inference graphs)";
    else
      user_check(!ctx.has_input(2)) << "Dropout training_mode must be a constant";
    return {ctx.input(0), {DataType::boolean(), ctx.shape(0)}};
  };
  def.eval = [](const EvalContext& ctx) -> std::vector<HostTensor> {
    const HostTensor& x = ctx.input(0);
    HostTensor mask =
        HostTensor::from_i64(DataType::boolean(), x.shape(), std::vector<int64_t>(x.numel(), 1));
    return {x, mask};
  };
  return def;
}

OpDef not_op() {
  OpDef def{"Not"};
  def.infer = [](const InferContext& ctx) -> std::vector<TensorType> {
    user_check(ctx.dtype(0).is_bool()) << "Not needs a bool input, got " << ctx.dtype(0).str();
    return same_as_input0(ctx);
  };
  def.eval = [](const EvalContext& ctx) -> std::vector<HostTensor> {
    return {map_i64(ctx.input(0), DataType::boolean(), [](int64_t v) { return int64_t{v == 0}; })};
  };
  return def;
}

OpDef is_nan_op() {
  OpDef def{"IsNaN"};
  def.infer = [](const InferContext& ctx) -> std::vector<TensorType> {
    require_float(ctx, 0);
    return {{DataType::boolean(), ctx.shape(0)}};
  };
  def.eval = [](const EvalContext& ctx) -> std::vector<HostTensor> {
    return {map_f64(ctx.input(0), DataType::boolean(),
                    [](double v) { return std::isnan(v) ? 1.0 : 0.0; })};
  };
  return def;
}

// Mod: fmod=1 is C's fmod (the dividend's sign), fmod=0 takes the divisor's sign as Python.
OpDef mod_op() {
  OpDef def{"Mod", {"fmod"}, 2, 2};
  def.infer = [](const InferContext& ctx) -> std::vector<TensorType> {
    require_same_dtype(ctx, 0, 1);
    const int64_t fmod = ctx.node().attr_int("fmod", 0);
    user_check(fmod == 0 || fmod == 1) << "Mod fmod must be 0 or 1, got " << fmod;
    return {{ctx.dtype(0), broadcast_shapes(ctx.shape(0), ctx.shape(1))}};
  };
  def.eval = [](const EvalContext& ctx) -> std::vector<HostTensor> {
    const HostTensor &a = ctx.input(0), &b = ctx.input(1);
    const bool c_style = ctx.node().attr_int("fmod", 0) == 1;
    if (is_float_dtype(a.dtype()))
      return {zip_f64(a, b, a.dtype(), [c_style](double x, double y) {
        double r = std::fmod(x, y);
        if (!c_style && r != 0 && (r < 0) != (y < 0)) r += y;
        return r;
      })};
    return {zip_i64(a, b, a.dtype(), [c_style](int64_t x, int64_t y) {
      user_check(y != 0) << "integer Mod by zero";
      if (y == -1) return int64_t{0};  // also avoids INT64_MIN % -1
      int64_t r = x % y;
      if (!c_style && r != 0 && (r < 0) != (y < 0)) r += y;
      return r;
    })};
  };
  return def;
}

OpDef is_inf_op() {
  OpDef def{"IsInf", {"detect_negative", "detect_positive"}};
  def.infer = [](const InferContext& ctx) -> std::vector<TensorType> {
    require_float(ctx, 0);
    return {{DataType::boolean(), ctx.shape(0)}};
  };
  def.eval = [](const EvalContext& ctx) -> std::vector<HostTensor> {
    const bool neg = ctx.node().attr_int("detect_negative", 1) != 0;
    const bool pos = ctx.node().attr_int("detect_positive", 1) != 0;
    return {map_f64(ctx.input(0), DataType::boolean(), [neg, pos](double v) {
      return std::isinf(v) && ((v < 0 && neg) || (v > 0 && pos)) ? 1.0 : 0.0;
    })};
  };
  return def;
}

double round_half_even(double v) {
  return std::nearbyint(v);
}
double sign(double v) {
  return v > 0 ? 1.0 : (v < 0 ? -1.0 : v);
}

}  // namespace

void add_elementwise_ops(OpList& ops) {
  ops.push_back(float_unary("Sqrt", [](double v) { return std::sqrt(v); }));
  ops.push_back(float_unary("Exp", [](double v) { return std::exp(v); }));
  ops.push_back(float_unary("Log", [](double v) { return std::log(v); }));
  ops.push_back(float_unary("Erf", [](double v) { return std::erf(v); }));
  ops.push_back(float_unary("Reciprocal", [](double v) { return 1.0 / v; }));
  ops.push_back(float_unary("Floor", [](double v) { return std::floor(v); }));
  ops.push_back(float_unary("Ceil", [](double v) { return std::ceil(v); }));
  ops.push_back(float_unary("Round", round_half_even));
  ops.push_back(float_unary("Sin", [](double v) { return std::sin(v); }));
  ops.push_back(float_unary("Cos", [](double v) { return std::cos(v); }));
  ops.push_back(float_unary("Tan", [](double v) { return std::tan(v); }));
  ops.push_back(float_unary("Asin", [](double v) { return std::asin(v); }));
  ops.push_back(float_unary("Acos", [](double v) { return std::acos(v); }));
  ops.push_back(float_unary("Atan", [](double v) { return std::atan(v); }));
  ops.push_back(float_unary("Sinh", [](double v) { return std::sinh(v); }));
  ops.push_back(float_unary("Cosh", [](double v) { return std::cosh(v); }));
  ops.push_back(float_unary("Asinh", [](double v) { return std::asinh(v); }));
  ops.push_back(float_unary("Acosh", [](double v) { return std::acosh(v); }));
  ops.push_back(float_unary("Atanh", [](double v) { return std::atanh(v); }));
  ops.push_back(numeric_unary(
      "Neg", [](double v) { return -v; }, [](int64_t v) { return wrap_sub(0, v); }));
  ops.push_back(numeric_unary(
      "Abs", [](double v) { return std::fabs(v); },
      [](int64_t v) { return v < 0 ? wrap_sub(0, v) : v; }));
  ops.push_back(numeric_unary("Sign", sign, [](int64_t v) { return int64_t{(v > 0) - (v < 0)}; }));

  ops.push_back(arithmetic("Add", std::plus<double>(), wrap_add));
  ops.push_back(arithmetic("Sub", std::minus<double>(), wrap_sub));
  ops.push_back(arithmetic("Mul", std::multiplies<double>(), wrap_mul));
  ops.push_back(arithmetic("Div", std::divides<double>(), int_div));
  ops.push_back(pow_op());
  auto int_min = [](int64_t a, int64_t b) { return std::min(a, b); };
  auto int_max = [](int64_t a, int64_t b) { return std::max(a, b); };
  ops.push_back(variadic("Min", nan_min, int_min, false));
  ops.push_back(variadic("Max", nan_max, int_max, false));
  ops.push_back(variadic("Sum", std::plus<double>(), wrap_add, false));
  ops.push_back(variadic("Mean", std::plus<double>(), wrap_add, true));

  ops.push_back(comparison(
      "Equal", [](double a, double b) { return a == b; },
      [](int64_t a, int64_t b) { return a == b; }));
  ops.push_back(comparison(
      "Less", [](double a, double b) { return a < b; },
      [](int64_t a, int64_t b) { return a < b; }));
  ops.push_back(comparison(
      "LessOrEqual", [](double a, double b) { return a <= b; },
      [](int64_t a, int64_t b) { return a <= b; }));
  ops.push_back(comparison(
      "Greater", [](double a, double b) { return a > b; },
      [](int64_t a, int64_t b) { return a > b; }));
  ops.push_back(comparison(
      "GreaterOrEqual", [](double a, double b) { return a >= b; },
      [](int64_t a, int64_t b) { return a >= b; }));
  ops.push_back(logical("And", [](bool a, bool b) { return a && b; }));
  ops.push_back(logical("Or", [](bool a, bool b) { return a || b; }));
  ops.push_back(logical("Xor", [](bool a, bool b) { return a != b; }));
  ops.push_back(not_op());
  ops.push_back(is_nan_op());
  ops.push_back(is_inf_op());
  ops.push_back(mod_op());

  OpDef where{"Where", {}, 3, 3};
  where.infer = infer_where;
  where.eval = eval_where;
  ops.push_back(std::move(where));
  ops.push_back(cast_op());
  ops.push_back(cast_like_op());
  ops.push_back(identity_op());
  ops.push_back(dropout_op());
}

}  // namespace kiln::graph
