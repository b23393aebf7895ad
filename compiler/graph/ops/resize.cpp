// Resize (canonical form of opset 11-17: inputs X, roi, scales, sizes; Upsample and
// Resize-10 are rewritten to it on import): nearest, linear and cubic interpolation with
// every coordinate_transformation_mode and nearest_mode of those opsets.
//
// Interpolation is separable, so the evaluator resizes one axis at a time, as the ONNX
// reference implementation does.
#include <algorithm>
#include <cmath>

#include "compiler/graph/ops/op_util.h"

namespace kiln::graph {

namespace {

struct ResizeShape {
  std::vector<int64_t> out;
  std::vector<double> scales;  // per axis, output / input
  // The output length coordinate transforms divide by: the size when sizes are given, the
  // unrounded input * scale when scales are (as the ONNX reference implementation does).
  std::vector<double> lengths;
  std::vector<double> roi;  // [starts..., ends...] for tf_crop_and_resize
};

ResizeShape resize_shape(const InferContext& ctx) {
  const Node& node = ctx.node();
  const auto& x = ctx.shape(0);
  const size_t rank = x.size();
  const std::string mode = node.attr_string("mode", "nearest");
  user_check(mode == "nearest" || mode == "linear" || mode == "cubic")
      << "Resize mode '" << mode << "' is not one of nearest, linear, cubic";
  const std::string ctm = node.attr_string("coordinate_transformation_mode", "half_pixel");
  static const char* kModes[] = {"half_pixel", "pytorch_half_pixel",   "align_corners",
                                 "asymmetric", "tf_half_pixel_for_nn", "tf_crop_and_resize"};
  user_check(std::find(std::begin(kModes), std::end(kModes), ctm) != std::end(kModes))
      << "Resize coordinate_transformation_mode '" << ctm
      << "' is not one of half_pixel, pytorch_half_pixel, align_corners, asymmetric, "
         "tf_half_pixel_for_nn, tf_crop_and_resize";
  const std::string nearest = node.attr_string("nearest_mode", "round_prefer_floor");
  user_check(nearest == "round_prefer_floor" || nearest == "round_prefer_ceil" ||
             nearest == "floor" || nearest == "ceil")
      << "Resize nearest_mode '" << nearest
      << "' is not one of round_prefer_floor, round_prefer_ceil, floor, ceil";

  ResizeShape s;
  const bool crop = ctm == "tf_crop_and_resize";
  if (crop) {
    s.roi = ctx.floats(1, "roi");
    user_check(s.roi.size() == 2 * rank)
        << "Resize roi needs " << 2 * rank << " values (starts and ends), got " << s.roi.size();
  }
  // An empty scales tensor stands for "not given" (opset 11-12 models pass one with sizes).
  const bool has_scales = ctx.has_input(2) && shape_numel(ctx.shape(2)) > 0;
  const bool has_sizes = ctx.has_input(3) && shape_numel(ctx.shape(3)) > 0;
  user_check(has_scales != has_sizes) << "Resize needs exactly one of scales and sizes";
  if (has_sizes) {
    s.out = ctx.ints(3, "sizes");
    user_check(s.out.size() == rank)
        << "Resize sizes has " << s.out.size() << " values for an input of rank " << rank;
    for (size_t i = 0; i < rank; ++i) {
      user_check(s.out[i] >= 0) << "Resize size " << s.out[i] << " is negative";
      s.scales.push_back(
          x[i] ? static_cast<double>(static_cast<float>(s.out[i]) / static_cast<float>(x[i]))
               : 1.0);
      s.lengths.push_back(static_cast<double>(s.out[i]));
    }
    return s;
  }
  std::vector<double> scales = ctx.floats(2, "scales");
  user_check(scales.size() == rank)
      << "Resize scales has " << scales.size() << " values for an input of rank " << rank;
  for (size_t i = 0; i < rank; ++i) {
    user_check(scales[i] > 0 && std::isfinite(scales[i]))
        << "Resize scale " << scales[i] << " must be positive";
    const double extent = crop ? s.roi[rank + i] - s.roi[i] : 1.0;
    const double size = std::floor(static_cast<double>(x[i]) * extent * scales[i]);
    user_check(size >= 0 && size < 1e12) << "Resize output size " << size << " is out of range";
    s.out.push_back(static_cast<int64_t>(size));
    s.lengths.push_back(static_cast<double>(x[i]) * scales[i]);
  }
  s.scales = scales;
  return s;
}

std::vector<TensorType> infer_resize(const InferContext& ctx) {
  return {{ctx.dtype(0), resize_shape(ctx).out}};
}

// Maps an output coordinate to the input along one axis.
double source_coordinate(const std::string& mode, double o, double scale, int64_t in, double out,
                         double roi_start, double roi_end) {
  if (mode == "half_pixel") return (o + 0.5) / scale - 0.5;
  if (mode == "pytorch_half_pixel") return out > 1 ? (o + 0.5) / scale - 0.5 : 0.0;
  if (mode == "align_corners") return out == 1 ? 0.0 : o * (in - 1) / (out - 1);
  if (mode == "asymmetric") return o / scale;
  if (mode == "tf_half_pixel_for_nn") return (o + 0.5) / scale;
  // tf_crop_and_resize
  if (out > 1) return roi_start * (in - 1) + o * (roi_end - roi_start) * (in - 1) / (out - 1);
  return 0.5 * (roi_start + roi_end) * (in - 1);
}

int64_t nearest_index(const std::string& mode, double x) {
  const double fl = std::floor(x);
  if (mode == "floor") return static_cast<int64_t>(fl);
  if (mode == "ceil") return static_cast<int64_t>(std::ceil(x));
  if (x - fl == 0.5) return static_cast<int64_t>(mode == "round_prefer_ceil" ? fl + 1 : fl);
  return static_cast<int64_t>(std::round(x));
}

// The input positions and weights that make one output element along an axis.
struct Taps {
  std::vector<int64_t> index;
  std::vector<double> weight;
  bool outside = false;  // tf_crop_and_resize sampled outside the input: extrapolation value
};

Taps taps_for(const Node& node, double x, int64_t in) {
  const std::string mode = node.attr_string("mode", "nearest");
  const bool crop = node.attr_string("coordinate_transformation_mode", "") == "tf_crop_and_resize";
  Taps t;
  if (crop && (x < 0 || x > in - 1)) {
    t.outside = true;
    return t;
  }
  auto clamp = [in](int64_t i) { return std::min<int64_t>(std::max<int64_t>(i, 0), in - 1); };
  if (mode == "nearest") {
    t.index = {clamp(nearest_index(node.attr_string("nearest_mode", "round_prefer_floor"), x))};
    t.weight = {1.0};
    return t;
  }
  if (mode == "linear") {
    x = std::min(std::max(x, 0.0), static_cast<double>(in - 1));
    const int64_t x0 = static_cast<int64_t>(std::floor(x));
    const double w = x - x0;
    t.index = {x0, clamp(x0 + 1)};
    t.weight = {1 - w, w};
    return t;
  }
  // Cubic convolution with coefficient A over the four nearest input positions.
  const double a = node.attr_float("cubic_coeff_a", -0.75f);
  const bool exclude_outside = node.attr_int("exclude_outside", 0) != 0;
  const int64_t x0 = static_cast<int64_t>(std::floor(x));
  const double r = x - x0;
  auto far = [a](double d) { return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a; };  // 1 < d < 2
  auto near = [a](double d) { return ((a + 2) * d - (a + 3)) * d * d + 1; };       // d <= 1
  const double coeffs[4] = {far(r + 1), near(r), near(1 - r), far(2 - r)};
  double total = 0;
  for (int k = 0; k < 4; ++k) {
    const int64_t i = x0 - 1 + k;
    if (exclude_outside && (i < 0 || i >= in)) continue;
    t.index.push_back(clamp(i));
    t.weight.push_back(coeffs[k]);
    total += coeffs[k];
  }
  // exclude_outside drops taps outside the input and renormalises the rest.
  if (exclude_outside && total != 0)
    for (double& w : t.weight) w /= total;
  return t;
}

// Resizes `x` (of `shape`) along `axis` to `out` elements.
std::vector<double> resize_axis(const Node& node, const std::vector<double>& x,
                                std::vector<int64_t>& shape, size_t axis, int64_t out,
                                double length, double scale, double roi_start, double roi_end) {
  const int64_t in = shape[axis];
  const int64_t outer = shape_numel({shape.begin(), shape.begin() + axis});
  const int64_t inner = shape_numel({shape.begin() + axis + 1, shape.end()});
  const std::string ctm = node.attr_string("coordinate_transformation_mode", "half_pixel");
  const double extrapolation = node.attr_float("extrapolation_value", 0.0f);
  std::vector<Taps> taps;
  for (int64_t o = 0; o < out; ++o)
    taps.push_back(
        taps_for(node, source_coordinate(ctm, o, scale, in, length, roi_start, roi_end), in));
  std::vector<double> y(outer * out * inner);
  for (int64_t p = 0; p < outer; ++p)
    for (int64_t o = 0; o < out; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        const Taps& t = taps[o];
        double v = t.outside ? extrapolation : 0.0;
        for (size_t k = 0; k < t.index.size(); ++k)
          v += t.weight[k] * x[(p * in + t.index[k]) * inner + i];
        y[(p * out + o) * inner + i] = v;
      }
  shape[axis] = out;
  return y;
}

std::vector<HostTensor> eval_resize(const EvalContext& ctx) {
  const ResizeShape s = resize_shape(ctx.infer_context());
  check_allocatable(ctx.input(0).dtype(), s.out);
  const Node& node = ctx.node();
  const HostTensor& xt = ctx.input(0);
  const bool crop = node.attr_string("coordinate_transformation_mode", "") == "tf_crop_and_resize";
  std::vector<int64_t> shape = xt.shape();
  std::vector<double> x = xt.to_f64();
  const size_t rank = shape.size();
  for (size_t axis = 0; axis < rank; ++axis) {
    // An axis that keeps its size and scale 1 maps every element to itself.
    if (!crop && s.out[axis] == shape[axis] && s.scales[axis] == 1.0) continue;
    if (shape_numel(shape) == 0) {
      shape[axis] = s.out[axis];
      x.assign(shape_numel(shape), 0.0);
      continue;
    }
    x = resize_axis(node, x, shape, axis, s.out[axis], s.lengths[axis], s.scales[axis],
                    crop ? s.roi[axis] : 0.0, crop ? s.roi[rank + axis] : 1.0);
  }
  return {HostTensor::from_f64(xt.dtype(), s.out, x)};
}

}  // namespace

void add_resize_ops(OpList& ops) {
  OpDef resize{"Resize",
               {"coordinate_transformation_mode", "cubic_coeff_a", "exclude_outside",
                "extrapolation_value", "mode", "nearest_mode"},
               1,
               4};
  resize.infer = infer_resize;
  resize.eval = eval_resize;
  ops.push_back(std::move(resize));
}

}  // namespace kiln::graph
