// Normalizations: BatchNormalization (inference and training form), InstanceNormalization,
// LayerNormalization (with its optional Mean and InvStdDev outputs), LRN,
// MeanVarianceNormalization, Softmax, LogSoftmax and Hardmax. Statistics are in double.
#include <cmath>

#include "compiler/graph/ops/op_util.h"

namespace kiln::graph {

namespace {

// Training mode (training_mode=1 from opset 14; before, any output past Y): Y is normalised
// by the batch's own statistics, and the running statistics come out updated by momentum.
// BiT's weight standardisation runs it on the weights, where it folds at compile time.
bool in_training(const Node& node) {
  bool statistics_out = false;
  for (size_t i = 1; i < node.outputs.size(); ++i) statistics_out |= node.has_output(i);
  return node.attr_int("training_mode", 0) != 0 || statistics_out;
}

std::vector<TensorType> infer_batch_norm(const InferContext& ctx) {
  const Node& node = ctx.node();
  require_float(ctx, 0);
  user_check(node.attr_int("spatial", 1) == 1)
      << "BatchNormalization with spatial=0 is not supported";
  const auto& x = ctx.shape(0);
  user_check(x.size() >= 2) << "BatchNormalization input must have rank >= 2, got " << shape_str(x);
  for (size_t i = 1; i < 5; ++i)
    user_check(ctx.shape(i) == std::vector<int64_t>{x[1]})
        << "BatchNormalization input " << i << " must have shape [" << x[1] << "], got "
        << shape_str(ctx.shape(i));
  std::vector<TensorType> out = {ctx.input(0)};
  // running mean and variance, then (before opset 14) the batch's mean and variance.
  for (size_t i = 1; i < node.outputs.size(); ++i) out.push_back(ctx.input(3));
  return out;
}

// Per channel: y = (x - mean) / sqrt(var + epsilon) * scale + bias, with the given statistics
// or, in training mode, the batch's (the population variance, as ONNX's reference).
std::vector<HostTensor> eval_batch_norm(const EvalContext& ctx) {
  infer_batch_norm(ctx.infer_context());
  const HostTensor& xt = ctx.input(0);
  std::vector<double> x = xt.to_f64();
  const std::vector<double> scale = ctx.input(1).to_f64(), bias = ctx.input(2).to_f64();
  std::vector<double> mean = ctx.input(3).to_f64(), var = ctx.input(4).to_f64();
  const double eps = ctx.node().attr_float("epsilon", 1e-5f);
  const int64_t channels = xt.shape()[1];
  const int64_t planes = xt.shape()[0] * channels;
  const int64_t inner = planes ? xt.numel() / planes : 1;
  const std::vector<double> given_mean = mean, given_var = var;
  if (in_training(ctx.node())) {
    const double count = static_cast<double>(xt.shape()[0] * inner);
    std::vector<double> sum(channels, 0.0), sq(channels, 0.0);
    for (int64_t i = 0; i < xt.numel(); ++i) sum[i / inner % channels] += x[i];
    for (int64_t c = 0; c < channels; ++c) mean[c] = sum[c] / count;
    for (int64_t i = 0; i < xt.numel(); ++i) {
      const double d = x[i] - mean[i / inner % channels];
      sq[i / inner % channels] += d * d;
    }
    for (int64_t c = 0; c < channels; ++c) var[c] = sq[c] / count;
  }
  for (int64_t i = 0; i < xt.numel(); ++i) {
    const int64_t c = i / inner % channels;
    x[i] = (x[i] - mean[c]) / std::sqrt(var[c] + eps) * scale[c] + bias[c];
  }
  std::vector<HostTensor> out = {HostTensor::from_f64(xt.dtype(), xt.shape(), x)};
  const double momentum = ctx.node().attr_float("momentum", 0.9f);
  std::vector<double> running_mean(channels), running_var(channels);
  for (int64_t c = 0; c < channels; ++c) {
    running_mean[c] = given_mean[c] * momentum + mean[c] * (1 - momentum);
    running_var[c] = given_var[c] * momentum + var[c] * (1 - momentum);
  }
  const HostTensor& stat = ctx.input(3);
  for (const std::vector<double>* v : {&running_mean, &running_var, &mean, &var})
    if (out.size() < ctx.node().outputs.size())
      out.push_back(HostTensor::from_f64(stat.dtype(), stat.shape(), *v));
  return out;
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
    for (int64_t i = 0; i < size; ++i)
      v[i] = (v[i] - mean) * inv * scale[p % channels] + bias[p % channels];
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

// Hardmax: 1 at the first maximum along the softmax axis (same axis rules), 0 elsewhere.
OpDef hardmax() {
  OpDef def{"Hardmax", {"axis", "coerce_to_2d"}};
  def.infer = [](const InferContext& ctx) -> std::vector<TensorType> {
    softmax_shape(ctx);
    return {ctx.input(0)};
  };
  def.eval = [](const EvalContext& ctx) -> std::vector<HostTensor> {
    const SoftmaxShape s = softmax_shape(ctx.infer_context());
    const HostTensor& xt = ctx.input(0);
    const std::vector<double> x = xt.to_f64();
    std::vector<double> y(x.size(), 0.0);
    for (int64_t o = 0; o < s.outer; ++o)
      for (int64_t i = 0; i < s.inner; ++i) {
        const int64_t base = o * s.len * s.inner + i;
        int64_t best = 0;
        for (int64_t k = 1; k < s.len; ++k)
          if (x[base + k * s.inner] > x[base + best * s.inner]) best = k;
        if (s.len > 0) y[base + best * s.inner] = 1.0;
      }
    return {HostTensor::from_f64(xt.dtype(), xt.shape(), y)};
  };
  return def;
}

// LRN across channels: x / (bias + alpha / size * sum of squares over the window)^beta.
std::vector<HostTensor> eval_lrn(const EvalContext& ctx) {
  const HostTensor& xt = ctx.input(0);
  const Node& node = ctx.node();
  const int64_t size = node.attr_int("size", 0);
  const double alpha = node.attr_float("alpha", 1e-4f), beta = node.attr_float("beta", 0.75f),
               bias = node.attr_float("bias", 1.0f);
  const std::vector<double> x = xt.to_f64();
  const int64_t n = xt.shape()[0], c = xt.shape()[1];
  const int64_t inner = n * c != 0 ? xt.numel() / (n * c) : 0;
  std::vector<double> y(x.size());
  const int64_t before = (size - 1) / 2, after = size - 1 - before;
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t i = 0; i < inner; ++i) {
        double sum = 0;
        for (int64_t k = std::max<int64_t>(0, ch - before); k <= std::min(c - 1, ch + after); ++k) {
          const double v = x[(b * c + k) * inner + i];
          sum += v * v;
        }
        const int64_t at = (b * c + ch) * inner + i;
        y[at] = x[at] / std::pow(bias + alpha / static_cast<double>(size) * sum, beta);
      }
  return {HostTensor::from_f64(xt.dtype(), xt.shape(), y)};
}

// MeanVarianceNormalization: (x - mean) / (sqrt(E[x^2] - mean^2) + 1e-9) over `axes`, as the
// ONNX function defines it.
std::vector<HostTensor> eval_mvn(const EvalContext& ctx) {
  const HostTensor& xt = ctx.input(0);
  const std::vector<int64_t> axes = normalize_axes(ctx.node().attr_ints("axes", {0, 2, 3}),
                                                   xt.rank(), "MeanVarianceNormalization axes");
  std::vector<int64_t> kept = xt.shape();
  for (int64_t a : axes) kept[a] = 1;
  const std::vector<double> x = xt.to_f64();
  std::vector<double> sum(shape_numel(kept), 0.0), sum_sq(sum.size(), 0.0);
  const std::vector<int64_t> strides = broadcast_strides(kept, xt.shape());
  for_each_index(xt.shape(), {strides}, [&](int64_t i, const int64_t* off) {
    sum[off[0]] += x[i];
    sum_sq[off[0]] += x[i] * x[i];
  });
  const double count = sum.empty() ? 1.0 : static_cast<double>(x.size() / sum.size());
  std::vector<double> y(x.size());
  for_each_index(xt.shape(), {strides}, [&](int64_t i, const int64_t* off) {
    const double mean = sum[off[0]] / count;
    const double var = sum_sq[off[0]] / count - mean * mean;
    y[i] = (x[i] - mean) / (std::sqrt(std::max(var, 0.0)) + 1e-9);
  });
  return {HostTensor::from_f64(xt.dtype(), xt.shape(), y)};
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
  const std::vector<std::string> bn_attrs = {"epsilon", "momentum", "training_mode", "spatial",
                                             "is_test"};
  OpDef bn{"BatchNormalization", bn_attrs, 5, 5, 1, 5};  // Y, then training mode's statistics
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
  ops.push_back(hardmax());

  OpDef lrn{"LRN", {"alpha", "beta", "bias", "size"}};
  lrn.infer = [](const InferContext& ctx) -> std::vector<TensorType> {
    require_float(ctx, 0);
    user_check(ctx.shape(0).size() >= 3)
        << "LRN input must have rank >= 3, got " << shape_str(ctx.shape(0));
    user_check(ctx.node().attr_int("size", 0) >= 1) << "LRN needs a positive size";
    return {ctx.input(0)};
  };
  lrn.eval = eval_lrn;
  ops.push_back(std::move(lrn));

  OpDef mvn{"MeanVarianceNormalization", {"axes"}};
  mvn.infer = [](const InferContext& ctx) -> std::vector<TensorType> {
    require_float(ctx, 0);
    normalize_axes(ctx.node().attr_ints("axes", {0, 2, 3}), ctx.shape(0).size(),
                   "MeanVarianceNormalization axes");
    return {ctx.input(0)};
  };
  mvn.eval = eval_mvn;
  ops.push_back(std::move(mvn));
}

}  // namespace kiln::graph
