// Indexed reads and writes: Gather, GatherElements, GatherND, ScatterND, ScatterElements and
// OneHot. Indices may be negative (counted from the end); out-of-range ones are UserErrors.
// Gathers copy element bytes; scatters with a reduction compute in double.
#include <algorithm>
#include <cstring>

#include "compiler/graph/ops/op_util.h"

namespace kiln::graph {

namespace {

void require_index_type(const InferContext& ctx, size_t i) {
  user_check(ctx.dtype(i) == DataType::i64() || ctx.dtype(i) == DataType::i32())
      << ctx.node().op_type << " indices must be i32 or i64, got " << ctx.dtype(i).str();
}

std::vector<TensorType> infer_gather(const InferContext& ctx) {
  require_index_type(ctx, 1);
  const auto &x = ctx.shape(0), &idx = ctx.shape(1);
  user_check(!x.empty()) << "Gather of a scalar";
  const int64_t axis = normalize_axis(ctx.node().attr_int("axis", 0), x.size());
  std::vector<int64_t> out(x.begin(), x.begin() + axis);
  out.insert(out.end(), idx.begin(), idx.end());
  out.insert(out.end(), x.begin() + axis + 1, x.end());
  return {{ctx.dtype(0), out}};
}

// An index in [-dim, dim) as a non-negative one.
int64_t checked_index(int64_t i, int64_t dim, const char* op) {
  user_check(i >= -dim && i < dim)
      << op << " index " << i << " is out of range for a dimension of " << dim;
  return i < 0 ? i + dim : i;
}

std::vector<HostTensor> eval_gather(const EvalContext& ctx) {
  const TensorType out = infer_gather(ctx.infer_context())[0];
  const HostTensor& x = ctx.input(0);
  const std::vector<int64_t> indices = ctx.input(1).to_i64();
  const int64_t axis = normalize_axis(ctx.node().attr_int("axis", 0), x.rank());
  const int64_t outer = shape_numel({x.shape().begin(), x.shape().begin() + axis});
  const int64_t inner = shape_numel({x.shape().begin() + axis + 1, x.shape().end()});
  const int64_t dim = x.shape()[axis];
  const size_t bytes = x.dtype().bytes();
  HostTensor y(out.dtype, out.shape);
  const int64_t n = static_cast<int64_t>(indices.size());
  for (int64_t p = 0; p < outer; ++p)
    for (int64_t k = 0; k < n; ++k) {
      const int64_t i = checked_index(indices[k], dim, "Gather");
      copy_bytes(y.raw() + (p * n + k) * inner * bytes, x.raw() + (p * dim + i) * inner * bytes,
                 inner * bytes);
    }
  return {y};
}

std::vector<TensorType> infer_gather_elements(const InferContext& ctx) {
  require_index_type(ctx, 1);
  const auto &x = ctx.shape(0), &idx = ctx.shape(1);
  user_check(x.size() == idx.size())
      << "GatherElements indices " << shape_str(idx) << " must have the data's rank " << x.size();
  normalize_axis(ctx.node().attr_int("axis", 0), x.size());
  return {{ctx.dtype(0), idx}};
}

std::vector<HostTensor> eval_gather_elements(const EvalContext& ctx) {
  const TensorType out = infer_gather_elements(ctx.infer_context())[0];
  const HostTensor& x = ctx.input(0);
  const std::vector<int64_t> indices = ctx.input(1).to_i64();
  const int64_t axis = normalize_axis(ctx.node().attr_int("axis", 0), x.rank());
  const std::vector<int64_t> strides = shape_strides(x.shape());
  const std::vector<int64_t> out_strides = shape_strides(out.shape);
  const size_t bytes = x.dtype().bytes();
  HostTensor y(out.dtype, out.shape);
  for (int64_t o = 0; o < y.numel(); ++o) {
    int64_t src = 0;
    for (size_t d = 0; d < out.shape.size(); ++d) {
      int64_t i = o / out_strides[d] % out.shape[d];
      if (static_cast<int64_t>(d) == axis)
        i = checked_index(indices[o], x.shape()[d], "GatherElements");
      user_check(i < x.shape()[d]) << "GatherElements indices shape exceeds the data";
      src += i * strides[d];
    }
    copy_bytes(y.raw() + o * bytes, x.raw() + src * bytes, bytes);
  }
  return {y};
}

// GatherND: slices of data picked by index tuples (the last dimension of indices), after
// batch_dims leading dimensions that data and indices share.
struct GatherNDShape {
  int64_t batch_dims, tuple, batches, per_batch, slice;
  std::vector<int64_t> out;
};

GatherNDShape gather_nd_shape(const InferContext& ctx) {
  require_index_type(ctx, 1);
  const auto &x = ctx.shape(0), &idx = ctx.shape(1);
  GatherNDShape s;
  s.batch_dims = ctx.node().attr_int("batch_dims", 0);
  const int64_t r = x.size(), q = idx.size();
  user_check(q >= 1 && s.batch_dims >= 0 && s.batch_dims < std::min(r, q))
      << "GatherND batch_dims " << s.batch_dims << " must be below the ranks of data (" << r
      << ") and indices (" << q << ")";
  for (int64_t i = 0; i < s.batch_dims; ++i)
    user_check(x[i] == idx[i]) << "GatherND data " << shape_str(x) << " and indices "
                               << shape_str(idx) << " differ in batch dimension " << i;
  s.tuple = idx.back();
  user_check(s.tuple >= 1 && s.tuple <= r - s.batch_dims)
      << "GatherND index tuples of " << s.tuple << " do not fit data of rank " << r;
  s.out.assign(idx.begin(), idx.end() - 1);
  s.out.insert(s.out.end(), x.begin() + s.batch_dims + s.tuple, x.end());
  s.batches = shape_numel({x.begin(), x.begin() + s.batch_dims});
  s.per_batch = shape_numel({idx.begin() + s.batch_dims, idx.end() - 1});
  s.slice = shape_numel({x.begin() + s.batch_dims + s.tuple, x.end()});
  return s;
}

// The element offset in data of index tuple `t` (of batch `b`), and the slice length.
int64_t tuple_offset(const std::vector<int64_t>& x, const std::vector<int64_t>& indices,
                     int64_t batch_dims, int64_t tuple, int64_t b, int64_t t, const char* op) {
  const std::vector<int64_t> strides = shape_strides(x);
  int64_t offset = b * (batch_dims ? strides[batch_dims - 1] : 0);
  for (int64_t j = 0; j < tuple; ++j)
    offset +=
        checked_index(indices[t * tuple + j], x[batch_dims + j], op) * strides[batch_dims + j];
  return offset;
}

std::vector<HostTensor> eval_gather_nd(const EvalContext& ctx) {
  const GatherNDShape s = gather_nd_shape(ctx.infer_context());
  const HostTensor& x = ctx.input(0);
  const std::vector<int64_t> indices = ctx.input(1).to_i64();
  HostTensor y(x.dtype(), s.out);
  const size_t bytes = x.dtype().bytes();
  for (int64_t b = 0; b < s.batches; ++b)
    for (int64_t p = 0; p < s.per_batch; ++p) {
      const int64_t t = b * s.per_batch + p;
      const int64_t src = tuple_offset(x.shape(), indices, s.batch_dims, s.tuple, b, t, "GatherND");
      copy_bytes(y.raw() + t * s.slice * bytes, x.raw() + src * bytes, s.slice * bytes);
    }
  return {y};
}

// Combines an update into an element for ScatterND / ScatterElements' reduction.
double combine(const std::string& reduction, double old, double update) {
  if (reduction == "add") return old + update;
  if (reduction == "mul") return old * update;
  if (reduction == "max") return std::max(old, update);
  if (reduction == "min") return std::min(old, update);
  return update;
}

void check_reduction(const Node& node) {
  const std::string r = node.attr_string("reduction", "none");
  user_check(r == "none" || r == "add" || r == "mul" || r == "max" || r == "min")
      << node.op_type << " reduction '" << r << "' is not one of none, add, mul, max, min";
}

std::vector<TensorType> infer_scatter_nd(const InferContext& ctx) {
  require_index_type(ctx, 1);
  require_same_dtype(ctx, 0, 2);
  check_reduction(ctx.node());
  const auto &x = ctx.shape(0), &idx = ctx.shape(1), &upd = ctx.shape(2);
  user_check(!idx.empty() && idx.back() >= 1 && idx.back() <= static_cast<int64_t>(x.size()))
      << "ScatterND index tuples of shape " << shape_str(idx) << " do not fit data of rank "
      << x.size();
  std::vector<int64_t> want(idx.begin(), idx.end() - 1);
  want.insert(want.end(), x.begin() + idx.back(), x.end());
  user_check(upd == want) << "ScatterND updates have shape " << shape_str(upd) << ", expected "
                          << shape_str(want);
  return {ctx.input(0)};
}

std::vector<HostTensor> eval_scatter_nd(const EvalContext& ctx) {
  infer_scatter_nd(ctx.infer_context());
  const HostTensor& x = ctx.input(0);
  const std::vector<int64_t> indices = ctx.input(1).to_i64();
  const int64_t tuple = ctx.input(1).shape().back();
  const int64_t count = tuple ? static_cast<int64_t>(indices.size()) / tuple : 0;
  const int64_t slice = shape_numel({x.shape().begin() + tuple, x.shape().end()});
  const std::string reduction = ctx.node().attr_string("reduction", "none");
  std::vector<double> y = x.to_f64();
  const std::vector<double> upd = ctx.input(2).to_f64();
  for (int64_t t = 0; t < count; ++t) {
    const int64_t dst = tuple_offset(x.shape(), indices, 0, tuple, 0, t, "ScatterND");
    for (int64_t i = 0; i < slice; ++i)
      y[dst + i] = combine(reduction, y[dst + i], upd[t * slice + i]);
  }
  return {HostTensor::from_f64(x.dtype(), x.shape(), y)};
}

std::vector<TensorType> infer_scatter_elements(const InferContext& ctx) {
  require_index_type(ctx, 1);
  require_same_dtype(ctx, 0, 2);
  check_reduction(ctx.node());
  const auto &x = ctx.shape(0), &idx = ctx.shape(1);
  user_check(idx == ctx.shape(2) && idx.size() == x.size())
      << ctx.node().op_type << " indices " << shape_str(idx) << " and updates "
      << shape_str(ctx.shape(2)) << " must have one shape, of the data's rank";
  normalize_axis(ctx.node().attr_int("axis", 0), x.size());
  return {ctx.input(0)};
}

std::vector<HostTensor> eval_scatter_elements(const EvalContext& ctx) {
  infer_scatter_elements(ctx.infer_context());
  const HostTensor& x = ctx.input(0);
  const std::vector<int64_t>& idx_shape = ctx.input(1).shape();
  const std::vector<int64_t> indices = ctx.input(1).to_i64();
  const int64_t axis = normalize_axis(ctx.node().attr_int("axis", 0), x.rank());
  const std::string reduction = ctx.node().attr_string("reduction", "none");
  std::vector<double> y = x.to_f64();
  const std::vector<double> upd = ctx.input(2).to_f64();
  const std::vector<int64_t> strides = shape_strides(x.shape()),
                             idx_strides = shape_strides(idx_shape);
  for (size_t o = 0; o < indices.size(); ++o) {
    int64_t dst = 0;
    for (size_t d = 0; d < idx_shape.size(); ++d) {
      int64_t i = static_cast<int64_t>(o) / idx_strides[d] % idx_shape[d];
      if (static_cast<int64_t>(d) == axis)
        i = checked_index(indices[o], x.shape()[d], "ScatterElements");
      user_check(i < x.shape()[d]) << "ScatterElements indices shape exceeds the data";
      dst += i * strides[d];
    }
    y[dst] = combine(reduction, y[dst], upd[o]);
  }
  return {HostTensor::from_f64(x.dtype(), x.shape(), y)};
}

// OneHot: indices -> a new axis of `depth` holding values[1] at the index, values[0] elsewhere.
struct OneHotShape {
  int64_t axis, depth;
  std::vector<int64_t> out;
};

OneHotShape one_hot_shape(const InferContext& ctx) {
  const auto& idx = ctx.shape(0);
  user_check(shape_numel(ctx.shape(1)) == 1) << "OneHot depth must be a scalar";
  user_check(shape_numel(ctx.shape(2)) == 2) << "OneHot values must hold [off, on]";
  OneHotShape s;
  const std::vector<double> depth = ctx.floats(1, "depth");
  user_check(depth[0] >= 1 && depth[0] < 1e9) << "OneHot depth " << depth[0] << " is out of range";
  s.depth = static_cast<int64_t>(depth[0]);
  s.axis = normalize_axis(ctx.node().attr_int("axis", -1), idx.size() + 1);
  s.out = idx;
  s.out.insert(s.out.begin() + s.axis, s.depth);
  check_allocatable(ctx.dtype(2), s.out);
  return s;
}

std::vector<HostTensor> eval_one_hot(const EvalContext& ctx) {
  const OneHotShape s = one_hot_shape(ctx.infer_context());
  const std::vector<int64_t> indices = ctx.input(0).to_i64();
  const HostTensor& values = ctx.input(2);
  const std::vector<int64_t>& idx = ctx.input(0).shape();
  const int64_t outer = shape_numel({idx.begin(), idx.begin() + s.axis});
  const int64_t inner = shape_numel({idx.begin() + s.axis, idx.end()});
  HostTensor y(values.dtype(), s.out);
  const size_t bytes = values.dtype().bytes();
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t d = 0; d < s.depth; ++d)
      for (int64_t i = 0; i < inner; ++i) {
        int64_t v = indices[o * inner + i];
        if (v < 0) v += s.depth;
        const int64_t which = v == d ? 1 : 0;
        copy_bytes(y.raw() + ((o * s.depth + d) * inner + i) * bytes, values.raw() + which * bytes,
                   bytes);
      }
  return {y};
}

}  // namespace

void add_gather_scatter_ops(OpList& ops) {
  OpDef gather{"Gather", {"axis"}, 2, 2};
  gather.infer = infer_gather;
  gather.eval = eval_gather;
  ops.push_back(std::move(gather));

  OpDef gather_elements{"GatherElements", {"axis"}, 2, 2};
  gather_elements.infer = infer_gather_elements;
  gather_elements.eval = eval_gather_elements;
  ops.push_back(std::move(gather_elements));

  OpDef gather_nd{"GatherND", {"batch_dims"}, 2, 2};
  gather_nd.infer = [](const InferContext& ctx) -> std::vector<TensorType> {
    return {{ctx.dtype(0), gather_nd_shape(ctx).out}};
  };
  gather_nd.eval = eval_gather_nd;
  ops.push_back(std::move(gather_nd));

  OpDef scatter_nd{"ScatterND", {"reduction"}, 3, 3};
  scatter_nd.infer = infer_scatter_nd;
  scatter_nd.eval = eval_scatter_nd;
  ops.push_back(std::move(scatter_nd));

  OpDef scatter_elements{"ScatterElements", {"axis", "reduction"}, 3, 3};
  scatter_elements.infer = infer_scatter_elements;
  scatter_elements.eval = eval_scatter_elements;
  ops.push_back(std::move(scatter_elements));

  OpDef one_hot{"OneHot", {"axis"}, 3, 3};
  one_hot.infer = [](const InferContext& ctx) -> std::vector<TensorType> {
    return {{ctx.dtype(2), one_hot_shape(ctx).out}};
  };
  one_hot.eval = eval_one_hot;
  ops.push_back(std::move(one_hot));
}

}  // namespace kiln::graph
