// Operators that make a tensor from scalars and shapes: ConstantOfShape and Range. Once
// shapes are known their inputs are usually constant and they fold away.
#include <cmath>

#include "compiler/graph/ops/op_util.h"

namespace kiln::graph {

namespace {

HostTensor fill_value(const Node& node) {
  const HostTensor* value = node.attr_tensor("value");
  if (!value) return HostTensor(DataType::f32(), {1});
  user_check(value->numel() == 1) << "ConstantOfShape value must hold one element, got shape "
                                  << shape_str(value->shape());
  return *value;
}

std::vector<TensorType> infer_constant_of_shape(const InferContext& ctx) {
  const std::vector<int64_t> shape = ctx.ints(0, "shape");
  for (int64_t d : shape)
    user_check(d >= 0) << "ConstantOfShape shape " << shape_str(shape) << " has a negative size";
  return {{fill_value(ctx.node()).dtype(), shape}};
}

std::vector<HostTensor> eval_constant_of_shape(const EvalContext& ctx) {
  const TensorType out = infer_constant_of_shape(ctx.infer_context())[0];
  const HostTensor value = fill_value(ctx.node());
  HostTensor y(out.dtype, out.shape);
  const size_t bytes = out.dtype.bytes();
  for (int64_t i = 0; i < y.numel(); ++i) std::copy_n(value.raw(), bytes, y.raw() + i * bytes);
  return {y};
}

// Range's element count: max(ceil((limit - start) / delta), 0).
int64_t range_count(const InferContext& ctx) {
  for (size_t i = 0; i < 3; ++i)
    user_check(shape_numel(ctx.shape(i)) == 1)
        << "Range inputs must be scalars, input " << i << " has shape " << shape_str(ctx.shape(i));
  require_same_dtype(ctx, 0, 1);
  require_same_dtype(ctx, 0, 2);
  double count;
  if (is_float_dtype(ctx.dtype(0))) {
    const double start = ctx.floats(0, "start")[0], limit = ctx.floats(1, "limit")[0],
                 delta = ctx.floats(2, "delta")[0];
    user_check(delta != 0 && std::isfinite(delta)) << "Range delta must be non-zero and finite";
    count = std::ceil((limit - start) / delta);
  } else {
    const int64_t start = ctx.ints(0, "start")[0], limit = ctx.ints(1, "limit")[0],
                  delta = ctx.ints(2, "delta")[0];
    user_check(delta != 0) << "Range delta must be non-zero";
    count = std::ceil((static_cast<double>(limit) - static_cast<double>(start)) /
                      static_cast<double>(delta));
  }
  user_check(!std::isnan(count) && count < 1e12) << "Range would have too many elements";
  return count > 0 ? static_cast<int64_t>(count) : 0;
}

std::vector<HostTensor> eval_range(const EvalContext& ctx) {
  const InferContext ictx = ctx.infer_context();
  const int64_t n = range_count(ictx);
  const DataType t = ctx.input(0).dtype();
  check_allocatable(t, {n});
  if (is_float_dtype(t)) {
    const double start = ctx.input(0).f64_at(0), delta = ctx.input(2).f64_at(0);
    std::vector<double> v(n);
    for (int64_t i = 0; i < n; ++i) v[i] = start + static_cast<double>(i) * delta;
    return {HostTensor::from_f64(t, {n}, v)};
  }
  const int64_t start = ctx.input(0).i64_at(0), delta = ctx.input(2).i64_at(0);
  std::vector<int64_t> v(n);
  // In unsigned arithmetic: each value lies in [start, limit), but i * delta alone may not.
  for (int64_t i = 0; i < n; ++i)
    v[i] = static_cast<int64_t>(static_cast<uint64_t>(start) +
                                static_cast<uint64_t>(i) * static_cast<uint64_t>(delta));
  return {HostTensor::from_i64(t, {n}, v)};
}

}  // namespace

void add_generator_ops(OpList& ops) {
  OpDef cos{"ConstantOfShape", {"value"}};
  cos.infer = infer_constant_of_shape;
  cos.eval = eval_constant_of_shape;
  ops.push_back(std::move(cos));

  OpDef range{"Range", {}, 3, 3};
  range.infer = [](const InferContext& ctx) -> std::vector<TensorType> {
    return {{ctx.dtype(0), {range_count(ctx)}}};
  };
  range.eval = eval_range;
  ops.push_back(std::move(range));
}

}  // namespace kiln::graph
