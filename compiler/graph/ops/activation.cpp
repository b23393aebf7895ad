// Activation functions: Relu, Sigmoid, Tanh, the parameterised ones (LeakyRelu, Elu,
// HardSigmoid...), PRelu with its broadcast slope, and Clip with its optional bounds.
#include <cmath>
#include <limits>

#include "compiler/graph/ops/op_util.h"

namespace kiln::graph {

namespace {

using Fn = std::function<double(double)>;
// Builds the scalar function from the node's attributes.
using FnOfNode = std::function<Fn(const Node&)>;

OpDef activation(std::string type, std::vector<std::string> attributes, FnOfNode make) {
  OpDef def{std::move(type), std::move(attributes)};
  def.infer = [](const InferContext& ctx) -> std::vector<TensorType> {
    require_float(ctx, 0);
    return {ctx.input(0)};
  };
  def.eval = [make](const EvalContext& ctx) -> std::vector<HostTensor> {
    const HostTensor& x = ctx.input(0);
    return {map_f64(x, x.dtype(), make(ctx.node()))};
  };
  return def;
}

OpDef activation(std::string type, Fn fn) {
  return activation(std::move(type), {}, [fn](const Node&) { return fn; });
}

double sigmoid(double x) {
  return 1.0 / (1.0 + std::exp(-x));
}

// log(1 + e^x) without overflow for large x.
double softplus(double x) {
  return x > 30 ? x : std::log1p(std::exp(x));
}

OpDef relu_op() {
  OpDef def{"Relu"};
  def.infer = [](const InferContext& ctx) -> std::vector<TensorType> { return {ctx.input(0)}; };
  def.eval = [](const EvalContext& ctx) -> std::vector<HostTensor> {
    const HostTensor& x = ctx.input(0);
    if (is_float_dtype(x.dtype()))
      return {map_f64(x, x.dtype(), [](double v) { return v < 0 ? 0.0 : v; })};
    return {map_i64(x, x.dtype(), [](int64_t v) { return v < 0 ? int64_t{0} : v; })};
  };
  return def;
}

OpDef prelu_op() {
  OpDef def{"PRelu", {}, 2, 2};
  // The slope broadcasts to the input (unidirectionally): the output has the input's shape.
  def.infer = [](const InferContext& ctx) -> std::vector<TensorType> {
    require_float(ctx, 0);
    require_same_dtype(ctx, 0, 1);
    user_check(broadcast_shapes(ctx.shape(0), ctx.shape(1)) == ctx.shape(0))
        << "PRelu slope of shape " << shape_str(ctx.shape(1))
        << " does not broadcast to the input's shape " << shape_str(ctx.shape(0));
    return {ctx.input(0)};
  };
  def.eval = [](const EvalContext& ctx) -> std::vector<HostTensor> {
    const HostTensor& x = ctx.input(0);
    return {zip_f64(x, ctx.input(1), x.dtype(),
                    [](double v, double slope) { return v < 0 ? v * slope : v; })};
  };
  return def;
}

std::vector<TensorType> infer_clip(const InferContext& ctx) {
  for (size_t i = 1; i < 3; ++i) {
    if (!ctx.has_input(i)) continue;
    // Bounds are read as numbers: opset < 11 models get f32 bounds from attributes whatever
    // the input's type.
    user_check(shape_numel(ctx.shape(i)) == 1)
        << "Clip " << (i == 1 ? "min" : "max") << " must be a scalar, got shape "
        << shape_str(ctx.shape(i));
  }
  return {ctx.input(0)};
}

std::vector<HostTensor> eval_clip(const EvalContext& ctx) {
  const HostTensor& x = ctx.input(0);
  if (is_float_dtype(x.dtype())) {
    double lo = ctx.has_input(1) ? ctx.input(1).f64_at(0) : -INFINITY;
    double hi = ctx.has_input(2) ? ctx.input(2).f64_at(0) : INFINITY;
    return {map_f64(x, x.dtype(), [lo, hi](double v) { return std::min(std::max(v, lo), hi); })};
  }
  int64_t lo = ctx.has_input(1) ? ctx.input(1).i64_at(0) : std::numeric_limits<int64_t>::min();
  int64_t hi = ctx.has_input(2) ? ctx.input(2).i64_at(0) : std::numeric_limits<int64_t>::max();
  return {map_i64(x, x.dtype(), [lo, hi](int64_t v) { return std::min(std::max(v, lo), hi); })};
}

}  // namespace

void add_activation_ops(OpList& ops) {
  ops.push_back(relu_op());
  ops.push_back(prelu_op());
  ops.push_back(activation("Sigmoid", sigmoid));
  ops.push_back(activation("Tanh", [](double x) { return std::tanh(x); }));
  ops.push_back(activation("Softplus", softplus));
  // Mish (opset 18; earlier exports write it out as Softplus, Tanh and Mul).
  ops.push_back(activation("Mish", [](double x) { return x * std::tanh(softplus(x)); }));
  ops.push_back(activation("Softsign", [](double x) { return x / (1 + std::fabs(x)); }));
  ops.push_back(activation("HardSwish",
                           [](double x) { return x * std::max(0.0, std::min(1.0, x / 6 + 0.5)); }));
  ops.push_back(activation("LeakyRelu", {"alpha"}, [](const Node& n) -> Fn {
    double alpha = n.attr_float("alpha", 0.01f);
    return [alpha](double x) { return x < 0 ? alpha * x : x; };
  }));
  ops.push_back(activation("HardSigmoid", {"alpha", "beta"}, [](const Node& n) -> Fn {
    double alpha = n.attr_float("alpha", 0.2f), beta = n.attr_float("beta", 0.5f);
    return [alpha, beta](double x) { return std::max(0.0, std::min(1.0, alpha * x + beta)); };
  }));
  ops.push_back(activation("Elu", {"alpha"}, [](const Node& n) -> Fn {
    double alpha = n.attr_float("alpha", 1.0f);
    return [alpha](double x) { return x < 0 ? alpha * std::expm1(x) : x; };
  }));
  ops.push_back(activation("Selu", {"alpha", "gamma"}, [](const Node& n) -> Fn {
    double alpha = n.attr_float("alpha", 1.67326319217681884765625f);
    double gamma = n.attr_float("gamma", 1.05070102214813232421875f);
    return [alpha, gamma](double x) { return x > 0 ? gamma * x : gamma * alpha * std::expm1(x); };
  }));
  ops.push_back(activation("Celu", {"alpha"}, [](const Node& n) -> Fn {
    double alpha = n.attr_float("alpha", 1.0f);
    return [alpha](double x) {
      return std::max(0.0, x) + std::min(0.0, alpha * std::expm1(x / alpha));
    };
  }));
  ops.push_back(activation("ThresholdedRelu", {"alpha"}, [](const Node& n) -> Fn {
    double alpha = n.attr_float("alpha", 1.0f);
    return [alpha](double x) { return x > alpha ? x : 0.0; };
  }));
  ops.push_back(activation("Shrink", {"bias", "lambd"}, [](const Node& n) -> Fn {
    double bias = n.attr_float("bias", 0.0f), lambd = n.attr_float("lambd", 0.5f);
    return [bias, lambd](double x) { return x < -lambd ? x + bias : (x > lambd ? x - bias : 0.0); };
  }));
  OpDef clip{"Clip", {}, 1, 3};
  clip.infer = infer_clip;
  clip.eval = eval_clip;
  ops.push_back(std::move(clip));
}

}  // namespace kiln::graph
