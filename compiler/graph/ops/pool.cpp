// Pooling: MaxPool (with dilations, ceil_mode and the optional Indices output),
// AveragePool (count_include_pad), GlobalAveragePool and GlobalMaxPool, over 1 to 3
// spatial dimensions.
#include <array>
#include <cmath>
#include <limits>

#include "compiler/graph/ops/op_util.h"
#include "compiler/graph/ops/window.h"

namespace kiln::graph {

namespace {

std::vector<int64_t> spatial(const std::vector<int64_t>& shape) {
  return {shape.begin() + 2, shape.end()};
}

Window pool_window(const InferContext& ctx) {
  const Node& node = ctx.node();
  const auto& x = ctx.shape(0);
  user_check(x.size() >= 3 && x.size() <= 5)
      << node.op_type << " input must have rank 3 to 5 (N, C and 1 to 3 spatial dimensions), got "
      << shape_str(x);
  user_check(node.has_attr("kernel_shape")) << node.op_type << " needs kernel_shape";
  const std::vector<int64_t> kernel = kernel_shape(node, x.size() - 2, {});
  const int64_t ceil_mode = node.attr_int("ceil_mode", 0);
  user_check(ceil_mode == 0 || ceil_mode == 1)
      << node.op_type << " ceil_mode must be 0 or 1, got " << ceil_mode;
  return make_window(node, spatial(x), kernel, ceil_mode == 1);
}

std::vector<int64_t> pool_output_shape(const std::vector<int64_t>& x, const Window& w) {
  std::vector<int64_t> out = {x[0], x[1]};
  out.insert(out.end(), w.out.begin(), w.out.end());
  return out;
}

std::vector<TensorType> infer_max_pool(const InferContext& ctx) {
  const Window w = pool_window(ctx);
  const int64_t order = ctx.node().attr_int("storage_order", 0);
  user_check(order == 0 || order == 1) << "MaxPool storage_order must be 0 or 1, got " << order;
  std::vector<int64_t> shape = pool_output_shape(ctx.shape(0), w);
  return {{ctx.dtype(0), shape}, {DataType::i64(), shape}};
}

std::vector<TensorType> infer_average_pool(const InferContext& ctx) {
  require_float(ctx, 0);
  return {{ctx.dtype(0), pool_output_shape(ctx.shape(0), pool_window(ctx))}};
}

// Visits, for every output element of every (n, c) plane, the input elements its window
// covers: visit(out_index, plane_offset, in_index_in_plane or -1 for padding, d, h, w).
template <typename Begin, typename Visit, typename End>
void for_each_window(const std::vector<int64_t>& x_shape, const Window& window, Begin begin,
                     Visit visit, End end) {
  const Window w = window.padded_to(3);
  const int64_t planes = x_shape[0] * x_shape[1];
  const int64_t in_plane = w.in[0] * w.in[1] * w.in[2];
  int64_t o = 0;
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t od = 0; od < w.out[0]; ++od)
      for (int64_t oh = 0; oh < w.out[1]; ++oh)
        for (int64_t ow = 0; ow < w.out[2]; ++ow, ++o) {
          begin();
          for (int64_t kd = 0; kd < w.kernel[0]; ++kd) {
            const int64_t d = od * w.stride[0] + kd * w.dilation[0] - w.pad_begin[0];
            for (int64_t kh = 0; kh < w.kernel[1]; ++kh) {
              const int64_t h = oh * w.stride[1] + kh * w.dilation[1] - w.pad_begin[1];
              for (int64_t kw = 0; kw < w.kernel[2]; ++kw) {
                const int64_t x = ow * w.stride[2] + kw * w.dilation[2] - w.pad_begin[2];
                // A position in the explicit padding, or past it (ceil mode overhang).
                const bool inside =
                    d >= 0 && d < w.in[0] && h >= 0 && h < w.in[1] && x >= 0 && x < w.in[2];
                const bool in_padding = d >= -w.pad_begin[0] && d < w.in[0] + w.pad_end[0] &&
                                        h >= -w.pad_begin[1] && h < w.in[1] + w.pad_end[1] &&
                                        x >= -w.pad_begin[2] && x < w.in[2] + w.pad_end[2];
                visit(p * in_plane, inside ? (d * w.in[1] + h) * w.in[2] + x : -1, in_padding,
                      std::array<int64_t, 3>{d, h, x});
              }
            }
          }
          end(o);
        }
}

std::vector<HostTensor> eval_max_pool(const EvalContext& ctx) {
  const InferContext ictx = ctx.infer_context();
  const Window w = pool_window(ictx);
  const std::vector<TensorType> types = infer_max_pool(ictx);
  const std::vector<int64_t>& xs = ctx.input(0).shape();
  const std::vector<double> x = ctx.input(0).to_f64();
  const bool column_major = ctx.node().attr_int("storage_order", 0) == 1;
  const Window w3 = w.padded_to(3);
  std::vector<double> y(shape_numel(types[0].shape));
  std::vector<int64_t> indices(y.size());
  double best = 0;
  int64_t best_index = 0;
  for_each_window(
      xs, w, [&] { best = -INFINITY, best_index = -1; },
      [&](int64_t plane, int64_t i, bool, std::array<int64_t, 3> pos) {
        if (i < 0) return;
        const double v = x[plane + i];
        if (v > best || best_index < 0 || std::isnan(v)) {
          best = v;
          // Indices count in the whole input tensor; storage_order 1 counts the spatial
          // position column-major.
          const int64_t spatial_index =
              column_major ? pos[0] + w3.in[0] * (pos[2] * w3.in[1] + pos[1]) : i;
          best_index = plane + spatial_index;
        }
      },
      [&](int64_t o) {
        y[o] = best;
        indices[o] = best_index;
      });
  return {HostTensor::from_f64(ctx.input(0).dtype(), types[0].shape, y),
          HostTensor::from_i64(DataType::i64(), types[1].shape, indices)};
}

std::vector<HostTensor> eval_average_pool(const EvalContext& ctx) {
  const InferContext ictx = ctx.infer_context();
  const Window w = pool_window(ictx);
  const std::vector<int64_t> shape = pool_output_shape(ctx.input(0).shape(), w);
  const bool include_pad = ctx.node().attr_int("count_include_pad", 0) != 0;
  const std::vector<double> x = ctx.input(0).to_f64();
  std::vector<double> y(shape_numel(shape));
  double sum = 0;
  int64_t count = 0;
  for_each_window(
      ctx.input(0).shape(), w, [&] { sum = 0, count = 0; },
      [&](int64_t plane, int64_t i, bool in_padding, std::array<int64_t, 3>) {
        if (i >= 0) sum += x[plane + i];
        if (include_pad ? in_padding : i >= 0) ++count;
      },
      [&](int64_t o) { y[o] = count ? sum / count : 0.0; });
  return {HostTensor::from_f64(ctx.input(0).dtype(), shape, y)};
}

// GlobalAveragePool / GlobalMaxPool: one value per (n, c), spatial dimensions kept as 1.
OpDef global_pool(std::string type, bool is_max) {
  OpDef def{std::move(type)};
  def.infer = [](const InferContext& ctx) -> std::vector<TensorType> {
    require_float(ctx, 0);
    std::vector<int64_t> shape = ctx.shape(0);
    user_check(shape.size() >= 2) << ctx.node().op_type << " needs an input of rank >= 2, got "
                                  << shape_str(shape);
    std::fill(shape.begin() + 2, shape.end(), 1);
    return {{ctx.dtype(0), shape}};
  };
  def.eval = [is_max, infer = def.infer](const EvalContext& ctx) -> std::vector<HostTensor> {
    const TensorType out = infer(ctx.infer_context())[0];
    const std::vector<double> x = ctx.input(0).to_f64();
    const int64_t planes = out.shape[0] * out.shape[1];
    const int64_t size = planes ? static_cast<int64_t>(x.size()) / planes : 0;
    std::vector<double> y(planes);
    for (int64_t p = 0; p < planes; ++p) {
      double acc = is_max ? -INFINITY : 0.0;
      for (int64_t i = 0; i < size; ++i)
        acc = is_max ? std::max(acc, x[p * size + i]) : acc + x[p * size + i];
      y[p] = is_max ? acc : acc / static_cast<double>(size);
    }
    return {HostTensor::from_f64(out.dtype, out.shape, y)};
  };
  return def;
}

}  // namespace

void add_pool_ops(OpList& ops) {
  const std::vector<std::string> window_attrs = {"auto_pad",     "ceil_mode", "dilations",
                                                 "kernel_shape", "pads",      "strides"};
  std::vector<std::string> max_attrs = window_attrs;
  max_attrs.push_back("storage_order");
  OpDef max_pool{"MaxPool", max_attrs, 1, 1, 1, 2};
  max_pool.infer = infer_max_pool;
  max_pool.eval = eval_max_pool;
  ops.push_back(std::move(max_pool));

  std::vector<std::string> avg_attrs = window_attrs;
  avg_attrs.push_back("count_include_pad");
  OpDef avg_pool{"AveragePool", avg_attrs};
  avg_pool.infer = infer_average_pool;
  avg_pool.eval = eval_average_pool;
  ops.push_back(std::move(avg_pool));

  ops.push_back(global_pool("GlobalAveragePool", false));
  ops.push_back(global_pool("GlobalMaxPool", true));
}

}  // namespace kiln::graph
