// Normalizations: BatchNormalization (inference form), InstanceNormalization,
// LayerNormalization (with its optional Mean and InvStdDev outputs), Softmax and
// LogSoftmax. Statistics are computed in double.
#include <cmath>

#include "graph/ops/op_util.h"

namespace kiln::graph {

namespace {

std::vector<TensorType> infer_batch_norm(const InferContext& ctx) {
  const Node& node = ctx.node();
  require_float(ctx, 0);
  user_check(node.attr_int("training_mode", 0) == 0)
      << "BatchNormalization with training_mode=1 is not supported (kiln compiles inference "
         "graphs)";
  user_check(node.attr_int("spatial", 1) == 1)
      << "BatchNormalization with spatial=0 is not supported";
  const auto& x = ctx.shape(0);
  user_check(x.size() >= 2) << "BatchNormalization input must have rank >= 2, got "
                            << shape_str(x);
  for (size_t i = 1; i < 5; ++i)
    user_check(ctx.shape(i) == std::vector<int64_t>{x[1]})
        << "BatchNormalization input " << i << " must have shape [" << x[1] << "], got "
        << shape_str(ctx.shape(i));
  return {ctx.input(0)};
}

// Per channel: y = (x - mean) / sqrt(var + epsilon) * scale + bias.
std::vector<HostTensor> eval_batch_norm(const EvalContext& ctx) {
  infer_batch_norm(ctx.infer_context());
  const HostTensor& xt = ctx.input(0);
  std::vector<double> x = xt.to_f64();
  const std::vector<double> scale = ctx.input(1).to_f64(), bias = ctx.input(2).to_f64(),
                            mean = ctx.input(3).to_f64(), var = ctx.input(4).to_f64();
  const double eps = ctx.node().attr_float("epsilon", 1e-5f);
  const int64_t channels = xt.shape()[1];
  const int64_t planes = xt.shape()[0] * channels;
  const int64_t inner = planes ? xt.numel() / planes : 1;
  for (int64_t i = 0; i < xt.numel(); ++i) {
    const int64_t c = i / inner % channels;
    x[i] = (x[i] - mean[c]) / std::sqrt(var[c] + eps) * scale[c] + bias[c];
  }
  return {HostTensor::from_f64(xt.dtype(), xt.shape(), x)};
}

std::vector<TensorType> infer_instance_norm(const InferContext& ctx) {
  require_float(ctx, 0);
  const auto& x = ctx.shape(0);
  user_check(x.size() >= 3) << "InstanceNormalization input must have rank >= 3, got "
                            << shape_str(x);
  for (size_t i = 1; i < 3; ++i)
    user_check(ctx.shape(i) == std::vector<int64_t>{x[1]})
        << "InstanceNormalization input " << i << " must have shape [" << x[1] << "], got "
        << shape_str(ctx.shape(i));
  return {ctx.input(0)};
}

std::vector<HostTensor> eval_instance_norm(const EvalContext& ctx) {
  infer_instance_norm(ctx.infer_context());
  const HostTensor& xt = ctx.input(0);
  std::vector<double> x = xt.to_f64();
  const std::vector<double> scale = ctx.input(1).to_f64(), bias = ctx.input(2).to_f64();
  const double eps = ctx.node().attr_float("epsilon", 1e-5f);
  const int64_t channels = xt.shape()[1], planes = xt.shape()[0] * channels;
  const int64_t size = planes ? xt.numel() / planes : 0;
  for (int64_t p = 0; p < planes; ++p) {
    double* v = &x[p * size];
    double mean = 0, var = 0;
    for (int64_t i = 0; i < size; ++i) mean += v[i];
    mean /= static_cast<double>(size);
    for (int64_t i = 0; i < size; ++i) var += (v[i] - mean) * (v[i] - mean);
    var /= static_cast<double>(size);
    const double inv = 1.0 / std::sqrt(var + eps);
    for (int64_t i = 0; i < size; ++i) v[i] = (v[i] - mean) * inv * scale[p % channels] + bias[p % channels];
  }
  return {HostTensor::from_f64(xt.dtype(), xt.shape(), x)};
}

struct LayerNormShape {
  int64_t axis, outer, inner;
  std::vector<int64_t> normalized;  // X's dimensions from axis on
  std::vector<int64_t> stat_shape;  // Mean and InvStdDev: X's with 1 from axis on
};

LayerNormShape layer_norm_shape(const InferContext& ctx) {
  require_float(ctx, 0);
  const auto& x = ctx.shape(0);
  const Node& node = ctx.node();
  user_check(node.attr_int("stash_type", 1) == 1)
      << "LayerNormalization stash_type " << node.attr_int("stash_type", 1)
      << " is not supported (only 1, float)";
  LayerNormShape s;
  s.axis = normalize_axis(node.attr_int("axis", -1), static_cast<int64_t>(x.size()));
  s.normalized.assign(x.begin() + s.axis, x.end());
  s.outer = shape_numel({x.begin(), x.begin() + s.axis});
  s.inner = shape_numel(s.normalized);
  s.stat_shape = x;
  std::fill(s.stat_shape.begin() + s.axis, s.stat_shape.end(), 1);
  for (size_t i = 1; i < 3; ++i) {
    if (!ctx.has_input(i)) continue;
    user_check(ctx.shape(i).size() <= s.normalized.size() &&
               broadcast_shapes(ctx.shape(i), s.normalized) == s.normalized)
        << "LayerNormalization " << (i == 1 ? "scale" : "bias") << " of shape "
        << shape_str(ctx.shape(i)) << " does not broadcast to the normalized shape "
        << shape_str(s.normalized);
  }
  return s;
}

std::vector<TensorType> infer_layer_norm(const InferContext& ctx) {
  const LayerNormShape s = layer_norm_shape(ctx);
  return {ctx.input(0), {DataType::f32(), s.stat_shape}, {DataType::f32(), s.stat_shape}};
}

std::vector<HostTensor> eval_layer_norm(const EvalContext& ctx) {
  const LayerNormShape s = layer_norm_shape(ctx.infer_context());
  const HostTensor& xt = ctx.input(0);
  std::vector<double> x = xt.to_f64();
  // Scale and bias expanded to the normalized shape once.
  auto expanded = [&](size_t i, double fallback) {
    std::vector<double> out(s.inner, fallback);
    if (!ctx.has_input(i)) return out;
    const std::vector<double> v = ctx.input(i).to_f64();
    for_each_index(s.normalized, {broadcast_strides(ctx.input(i).shape(), s.normalized)},
                   [&](int64_t o, const int64_t* off) { out[o] = v[off[0]]; });
    return out;
  };
  const std::vector<double> scale = expanded(1, 1.0), bias = expanded(2, 0.0);
  const double eps = ctx.node().attr_float("epsilon", 1e-5f);
  std::vector<double> means(s.outer), inv_std(s.outer);
  for (int64_t o = 0; o < s.outer; ++o) {
    double* v = &x[o * s.inner];
    double mean = 0, var = 0;
    for (int64_t i = 0; i < s.inner; ++i) mean += v[i];
    mean /= static_cast<double>(s.inner);
    for (int64_t i = 0; i < s.inner; ++i) var += (v[i] - mean) * (v[i] - mean);
    var /= static_cast<double>(s.inner);
    means[o] = mean;
    inv_std[o] = 1.0 / std::sqrt(var + eps);
    for (int64_t i = 0; i < s.inner; ++i) v[i] = (v[i] - mean) * inv_std[o] * scale[i] + bias[i];
  }
  return {HostTensor::from_f64(xt.dtype(), xt.shape(), x),
          HostTensor::from_f64(DataType::f32(), s.stat_shape, means),
          HostTensor::from_f64(DataType::f32(), s.stat_shape, inv_std)};
}

// Softmax over (outer, len, inner): len values `inner` apart. Since opset 13 the axis is one
// dimension; models of older opsets carry coerce_to_2d=1 (set by the importer), which
// flattens everything from the axis on into one softmax.
struct SoftmaxShape {
  int64_t outer, len, inner;
};

SoftmaxShape softmax_shape(const InferContext& ctx) {
  require_float(ctx, 0);
  const auto& x = ctx.shape(0);
  const int64_t rank = static_cast<int64_t>(x.size());
  const bool coerce = ctx.node().attr_int("coerce_to_2d", 0) != 0;
  if (rank == 0) return {1, 1, 1};
  const int64_t axis = normalize_axis(ctx.node().attr_int("axis", coerce ? 1 : -1), rank);
  const int64_t outer = shape_numel({x.begin(), x.begin() + axis});
  if (coerce) return {outer, shape_numel({x.begin() + axis, x.end()}), 1};
  return {outer, x[axis], shape_numel({x.begin() + axis + 1, x.end()})};
}

OpDef softmax(std::string type, bool log) {
  OpDef def{std::move(type), {"axis", "coerce_to_2d"}};
  def.infer = [](const InferContext& ctx) -> std::vector<TensorType> {
    softmax_shape(ctx);
    return {ctx.input(0)};
  };
  def.eval = [log](const EvalContext& ctx) -> std::vector<HostTensor> {
    const SoftmaxShape s = softmax_shape(ctx.infer_context());
    const HostTensor& xt = ctx.input(0);
    std::vector<double> x = xt.to_f64();
    for (int64_t o = 0; o < s.outer; ++o)
      for (int64_t i = 0; i < s.inner; ++i) {
        double* base = &x[o * s.len * s.inner + i];
        auto at = [&](int64_t k) -> double& { return base[k * s.inner]; };
        double max = -INFINITY, sum = 0;
        for (int64_t k = 0; k < s.len; ++k) max = std::max(max, at(k));
        for (int64_t k = 0; k < s.len; ++k) sum += std::exp(at(k) - max);
        for (int64_t k = 0; k < s.len; ++k)
          at(k) = log ? at(k) - max - std::log(sum) : std::exp(at(k) - max) / sum;
      }
    return {HostTensor::from_f64(xt.dtype(), xt.shape(), x)};
  };
  return def;
}

}  // namespace

void add_normalization_ops(OpList& ops) {
  OpDef bn{"BatchNormalization", {"epsilon", "momentum", "training_mode", "spatial", "is_test"}, 5, 5};
  bn.infer = infer_batch_norm;
  bn.eval = eval_batch_norm;
  ops.push_back(std::move(bn));

  OpDef in{"InstanceNormalization", {"epsilon"}, 3, 3};
  in.infer = infer_instance_norm;
  in.eval = eval_instance_norm;
  ops.push_back(std::move(in));

  OpDef ln{"LayerNormalization", {"axis", "epsilon", "stash_type"}, 2, 3, 1, 3};
  ln.infer = infer_layer_norm;
  ln.eval = eval_layer_norm;
  ops.push_back(std::move(ln));

  ops.push_back(softmax("Softmax", false));
  ops.push_back(softmax("LogSoftmax", true));
}

}  // namespace kiln::graph
