// Operators that change only the shape, or read it: Reshape (0 and -1, allowzero), Flatten,
// Squeeze, Unsqueeze, Expand, Shape (start/end), Size. Their shape arguments are inputs that
// must be constant once shapes are known (a Shape -> Gather -> Concat chain folds to one).
#include <algorithm>

#include "compiler/graph/ops/op_util.h"

namespace kiln::graph {

namespace {

// Every operator here but Expand keeps the data as it is and gives it a new shape.
std::vector<HostTensor> reshape_to_inferred(const EvalContext& ctx, const InferFn& infer) {
  return {ctx.input(0).reshaped(infer(ctx.infer_context())[0].shape)};
}

std::vector<TensorType> infer_reshape(const InferContext& ctx) {
  const auto& x = ctx.shape(0);
  std::vector<int64_t> shape = ctx.ints(1, "shape");
  const bool allow_zero = ctx.node().attr_int("allowzero", 0) != 0;
  int inferred = -1;
  int64_t known = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 0 && !allow_zero) {
      user_check(i < x.size()) << "Reshape shape " << shape_str(shape) << " copies dimension " << i
                               << " (0), which the input " << shape_str(x) << " lacks";
      shape[i] = x[i];
    }
    if (shape[i] == -1) {
      user_check(inferred < 0) << "Reshape shape " << shape_str(shape) << " has more than one -1";
      inferred = static_cast<int>(i);
      continue;
    }
    user_check(shape[i] >= 0) << "Reshape shape " << shape_str(shape) << " has a negative size";
    known = checked_mul(known, shape[i], "Reshape's shape");
  }
  const int64_t total = shape_numel(x);
  if (inferred >= 0) {
    user_check(known != 0 && total % known == 0)
        << "Reshape cannot infer the -1 in " << shape_str(shape) << " for an input of shape "
        << shape_str(x);
    shape[inferred] = total / known;
  }
  user_check(shape_numel(shape) == total)
      << "Reshape of " << shape_str(x) << " (" << total << " elements) to " << shape_str(shape)
      << " changes the element count";
  return {{ctx.dtype(0), shape}};
}

std::vector<TensorType> infer_flatten(const InferContext& ctx) {
  const auto& x = ctx.shape(0);
  const int64_t rank = static_cast<int64_t>(x.size());
  int64_t axis = ctx.node().attr_int("axis", 1);
  // Flatten's axis may equal the rank (everything in the first dimension).
  user_check(axis >= -rank && axis <= rank)
      << "Flatten axis " << axis << " is out of range for rank " << rank;
  if (axis < 0) axis += rank;
  return {{ctx.dtype(0),
           {shape_numel({x.begin(), x.begin() + axis}), shape_numel({x.begin() + axis, x.end()})}}};
}

std::vector<TensorType> infer_squeeze(const InferContext& ctx) {
  const auto& x = ctx.shape(0);
  const int64_t rank = static_cast<int64_t>(x.size());
  std::vector<bool> drop(rank, false);
  if (ctx.has_input(1)) {
    for (int64_t a : normalize_axes(ctx.ints(1, "axes"), rank)) {
      user_check(x[a] == 1) << "Squeeze of axis " << a << " of shape " << shape_str(x)
                            << ", which is not 1";
      drop[a] = true;
    }
  } else {
    for (int64_t i = 0; i < rank; ++i) drop[i] = x[i] == 1;
  }
  std::vector<int64_t> out;
  for (int64_t i = 0; i < rank; ++i)
    if (!drop[i]) out.push_back(x[i]);
  return {{ctx.dtype(0), out}};
}

std::vector<TensorType> infer_unsqueeze(const InferContext& ctx) {
  const auto& x = ctx.shape(0);
  const std::vector<int64_t> raw = ctx.ints(1, "axes");
  const int64_t rank = static_cast<int64_t>(x.size() + raw.size());
  std::vector<int64_t> axes = normalize_axes(raw, rank);
  std::sort(axes.begin(), axes.end());
  std::vector<int64_t> out;
  size_t next_axis = 0, next_dim = 0;
  for (int64_t i = 0; i < rank; ++i) {
    if (next_axis < axes.size() && axes[next_axis] == i) {
      out.push_back(1);
      ++next_axis;
    } else {
      out.push_back(x[next_dim++]);
    }
  }
  return {{ctx.dtype(0), out}};
}

std::vector<TensorType> infer_expand(const InferContext& ctx) {
  return {{ctx.dtype(0), broadcast_shapes(ctx.shape(0), ctx.ints(1, "shape"))}};
}

std::vector<HostTensor> eval_expand(const EvalContext& ctx) {
  const TensorType out = infer_expand(ctx.infer_context())[0];
  const HostTensor& x = ctx.input(0);
  HostTensor y(out.dtype, out.shape);
  const size_t bytes = x.dtype().bytes();
  for_each_index(out.shape, {broadcast_strides(x.shape(), out.shape)},
                 [&](int64_t o, const int64_t* off) {
                   std::copy_n(x.raw() + off[0] * bytes, bytes, y.raw() + o * bytes);
                 });
  return {y};
}

// Shape's [start, end) after the opset-15 clamping rules.
std::pair<int64_t, int64_t> shape_range(const InferContext& ctx) {
  const int64_t rank = static_cast<int64_t>(ctx.shape(0).size());
  auto clamp = [rank](int64_t v) {
    if (v < 0) v += rank;
    return std::min(std::max<int64_t>(v, 0), rank);
  };
  const int64_t start = clamp(ctx.node().attr_int("start", 0));
  const int64_t end = clamp(ctx.node().attr_int("end", rank));
  return {start, std::max(start, end)};
}

std::vector<TensorType> infer_shape(const InferContext& ctx) {
  auto [start, end] = shape_range(ctx);
  return {{DataType::i64(), {end - start}}};
}

std::vector<HostTensor> fold_shape(const InferContext& ctx) {
  auto [start, end] = shape_range(ctx);
  const auto& x = ctx.shape(0);
  return {HostTensor::i64_vector({x.begin() + start, x.begin() + end})};
}

OpDef shape_only(std::string type, std::vector<std::string> attrs, int min_in, int max_in,
                 InferFn infer) {
  OpDef def{std::move(type), std::move(attrs), min_in, max_in};
  def.infer = infer;
  def.eval = [infer](const EvalContext& ctx) { return reshape_to_inferred(ctx, infer); };
  return def;
}

}  // namespace

void add_shape_ops(OpList& ops) {
  ops.push_back(shape_only("Reshape", {"allowzero"}, 2, 2, infer_reshape));
  ops.push_back(shape_only("Flatten", {"axis"}, 1, 1, infer_flatten));
  ops.push_back(shape_only("Squeeze", {}, 1, 2, infer_squeeze));
  ops.push_back(shape_only("Unsqueeze", {}, 2, 2, infer_unsqueeze));

  OpDef expand{"Expand", {}, 2, 2};
  expand.infer = infer_expand;
  expand.eval = eval_expand;
  ops.push_back(std::move(expand));

  OpDef shape{"Shape", {"start", "end"}};
  shape.infer = infer_shape;
  shape.fold_from_types = fold_shape;
  shape.eval = [](const EvalContext& ctx) { return fold_shape(ctx.infer_context()); };
  ops.push_back(std::move(shape));

  OpDef size{"Size"};
  size.infer = [](const InferContext&) -> std::vector<TensorType> {
    return {{DataType::i64(), {}}};
  };
  size.fold_from_types = [](const InferContext& ctx) -> std::vector<HostTensor> {
    return {HostTensor::from_i64(DataType::i64(), {}, {shape_numel(ctx.shape(0))})};
  };
  size.eval = [](const EvalContext& ctx) -> std::vector<HostTensor> {
    return {HostTensor::from_i64(DataType::i64(), {}, {ctx.input(0).numel()})};
  };
  ops.push_back(std::move(size));
}

}  // namespace kiln::graph
