// Reductions: ReduceSum/Mean/Max/Min/Prod/SumSquare/L1/L2/LogSum/LogSumExp with axes as an
// input (canonical form for every opset), keepdims and noop_with_empty_axes; ArgMax, ArgMin,
// CumSum and TopK. Floats reduce in double, integers in int64.
#include <algorithm>
#include <cmath>
#include <limits>

#include "compiler/graph/ops/op_util.h"

namespace kiln::graph {

namespace {

enum class ReduceKind { Sum, Mean, Max, Min, Prod, SumSquare, L1, L2, LogSum, LogSumExp };

struct ReduceShape {
  std::vector<bool> reduced;  // per input dimension
  std::vector<int64_t> kept;  // the output with keepdims=1
  std::vector<int64_t> out;   // the output shape
  bool identity = false;      // noop_with_empty_axes and no axes
};

ReduceShape reduce_shape(const InferContext& ctx) {
  const auto& x = ctx.shape(0);
  const int64_t rank = static_cast<int64_t>(x.size());
  const Node& node = ctx.node();
  std::vector<int64_t> axes;
  if (ctx.has_input(1)) axes = normalize_axes(ctx.ints(1, "axes"), rank);
  ReduceShape s;
  const bool keep = node.attr_int("keepdims", 1) != 0;
  if (axes.empty() && node.attr_int("noop_with_empty_axes", 0) != 0) {
    s.identity = true;
    s.reduced.assign(rank, false);
    s.kept = s.out = x;
    return s;
  }
  s.reduced.assign(rank, axes.empty());
  for (int64_t a : axes) s.reduced[a] = true;
  for (int64_t i = 0; i < rank; ++i) {
    s.kept.push_back(s.reduced[i] ? 1 : x[i]);
    if (!s.reduced[i] || keep) s.out.push_back(s.reduced[i] ? 1 : x[i]);
  }
  return s;
}

template <typename C>
C initial(ReduceKind kind) {
  switch (kind) {
    case ReduceKind::Max:
      return std::numeric_limits<C>::has_infinity ? -std::numeric_limits<C>::infinity()
                                                  : std::numeric_limits<C>::lowest();
    case ReduceKind::Min:
      return std::numeric_limits<C>::has_infinity ? std::numeric_limits<C>::infinity()
                                                  : std::numeric_limits<C>::max();
    case ReduceKind::Prod:
      return C{1};
    default:
      return C{0};
  }
}

// a + b, wrapping for integers (whose overflow C++ leaves undefined).
template <typename C>
C add_wrapping(C a, C b) {
  if constexpr (std::is_integral_v<C>)
    return static_cast<C>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
  return a + b;
}

template <typename C>
C mul_wrapping(C a, C b) {
  if constexpr (std::is_integral_v<C>)
    return static_cast<C>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
  return a * b;
}

template <typename C>
C accumulate(ReduceKind kind, C acc, C v) {
  switch (kind) {
    case ReduceKind::Max:
      if constexpr (std::is_floating_point_v<C>)
        if (std::isnan(v) || std::isnan(acc)) return NAN;
      return std::max(acc, v);
    case ReduceKind::Min:
      if constexpr (std::is_floating_point_v<C>)
        if (std::isnan(v) || std::isnan(acc)) return NAN;
      return std::min(acc, v);
    case ReduceKind::Prod:
      return mul_wrapping(acc, v);
    case ReduceKind::SumSquare:
    case ReduceKind::L2:
      return add_wrapping(acc, mul_wrapping(v, v));
    case ReduceKind::L1:
      return add_wrapping(acc, v < 0 ? mul_wrapping(v, C{-1}) : v);
    case ReduceKind::LogSumExp:
      if constexpr (std::is_floating_point_v<C>) return acc + std::exp(v);
      return acc + static_cast<C>(std::exp(static_cast<double>(v)));
    default:
      return add_wrapping(acc, v);
  }
}

template <typename C>
C finish(ReduceKind kind, C acc, int64_t count) {
  switch (kind) {
    case ReduceKind::Mean:
      return count ? acc / static_cast<C>(count) : acc;
    case ReduceKind::L2:
      return static_cast<C>(std::sqrt(static_cast<double>(acc)));
    case ReduceKind::LogSum:
    case ReduceKind::LogSumExp:
      return static_cast<C>(std::log(static_cast<double>(acc)));
    default:
      return acc;
  }
}

template <typename C>
std::vector<C> reduce_values(ReduceKind kind, const std::vector<C>& x,
                             const std::vector<int64_t>& shape, const ReduceShape& s) {
  std::vector<C> acc(shape_numel(s.kept), initial<C>(kind));
  for_each_index(shape, {broadcast_strides(s.kept, shape)}, [&](int64_t i, const int64_t* off) {
    acc[off[0]] = accumulate(kind, acc[off[0]], x[i]);
  });
  const int64_t count = acc.empty() ? 0 : static_cast<int64_t>(x.size() / acc.size());
  for (C& v : acc) v = finish(kind, v, count);
  return acc;
}

OpDef reduce(std::string type, ReduceKind kind) {
  OpDef def{std::move(type), {"keepdims", "noop_with_empty_axes"}, 1, 2};
  def.infer = [](const InferContext& ctx) -> std::vector<TensorType> {
    return {{ctx.dtype(0), reduce_shape(ctx).out}};
  };
  def.eval = [kind](const EvalContext& ctx) -> std::vector<HostTensor> {
    const ReduceShape s = reduce_shape(ctx.infer_context());
    const HostTensor& x = ctx.input(0);
    if (s.identity) return {x};
    if (is_float_dtype(x.dtype()))
      return {
          HostTensor::from_f64(x.dtype(), s.out, reduce_values(kind, x.to_f64(), x.shape(), s))};
    return {HostTensor::from_i64(x.dtype(), s.out, reduce_values(kind, x.to_i64(), x.shape(), s))};
  };
  return def;
}

// ArgMax / ArgMin along one axis: the index (first, or last with select_last_index) of the
// extreme value.
OpDef arg_extreme(std::string type, bool is_max) {
  OpDef def{std::move(type), {"axis", "keepdims", "select_last_index"}};
  def.infer = [](const InferContext& ctx) -> std::vector<TensorType> {
    std::vector<int64_t> shape = ctx.shape(0);
    const int64_t axis = normalize_axis(ctx.node().attr_int("axis", 0), shape.size());
    user_check(shape[axis] > 0) << ctx.node().op_type << " of an empty axis";
    if (ctx.node().attr_int("keepdims", 1))
      shape[axis] = 1;
    else
      shape.erase(shape.begin() + axis);
    return {{DataType::i64(), shape}};
  };
  def.eval = [is_max, infer = def.infer](const EvalContext& ctx) -> std::vector<HostTensor> {
    const TensorType out = infer(ctx.infer_context())[0];
    const HostTensor& xt = ctx.input(0);
    const std::vector<double> x = xt.to_f64();
    const int64_t axis = normalize_axis(ctx.node().attr_int("axis", 0), xt.rank());
    const bool last = ctx.node().attr_int("select_last_index", 0) != 0;
    const int64_t len = xt.shape()[axis];
    const int64_t inner = shape_numel({xt.shape().begin() + axis + 1, xt.shape().end()});
    const int64_t outer = shape_numel({xt.shape().begin(), xt.shape().begin() + axis});
    std::vector<int64_t> y(outer * inner);
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        int64_t best = 0;
        for (int64_t k = 1; k < len; ++k) {
          const double v = x[(o * len + k) * inner + i], b = x[(o * len + best) * inner + i];
          const bool better = is_max ? (v > b || (last && v == b)) : (v < b || (last && v == b));
          if (better) best = k;
        }
        y[o * inner + i] = best;
      }
    return {HostTensor::from_i64(DataType::i64(), out.shape, y)};
  };
  return def;
}

// CumSum along the axis given as input 1; exclusive leaves out the element itself, reverse
// sums from the end.
std::vector<HostTensor> eval_cumsum(const EvalContext& ctx) {
  const HostTensor& xt = ctx.input(0);
  user_check(ctx.input(1).numel() == 1) << "CumSum axis must be a scalar";
  const int64_t axis = normalize_axis(ctx.input(1).i64_at(0), xt.rank());
  const bool exclusive = ctx.node().attr_int("exclusive", 0) != 0;
  const bool reverse = ctx.node().attr_int("reverse", 0) != 0;
  const int64_t len = xt.shape()[axis];
  const int64_t inner = shape_numel({xt.shape().begin() + axis + 1, xt.shape().end()});
  const int64_t outer = shape_numel({xt.shape().begin(), xt.shape().begin() + axis});
  auto run = [&](auto values) {
    auto out = values;
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        typename decltype(values)::value_type acc = 0;
        for (int64_t step = 0; step < len; ++step) {
          const int64_t k = reverse ? len - 1 - step : step;
          const int64_t at = (o * len + k) * inner + i;
          if (exclusive) out[at] = acc;
          acc = add_wrapping(acc, values[at]);
          if (!exclusive) out[at] = acc;
        }
      }
    return out;
  };
  if (is_float_dtype(xt.dtype()))
    return {HostTensor::from_f64(xt.dtype(), xt.shape(), run(xt.to_f64()))};
  return {HostTensor::from_i64(xt.dtype(), xt.shape(), run(xt.to_i64()))};
}

struct TopKShape {
  int64_t axis, k;
  std::vector<int64_t> out;
};

TopKShape topk_shape(const InferContext& ctx) {
  const auto& x = ctx.shape(0);
  TopKShape s;
  s.axis = normalize_axis(ctx.node().attr_int("axis", -1), x.size());
  const std::vector<int64_t> k = ctx.ints(1, "K");
  user_check(k.size() == 1 && k[0] >= 0 && k[0] <= x[s.axis])
      << "TopK K must be one value in [0, " << x[s.axis] << "]";
  s.k = k[0];
  s.out = x;
  s.out[s.axis] = s.k;
  return s;
}

// TopK: the k largest (or smallest) values along the axis, sorted, ties by lower index.
std::vector<HostTensor> eval_topk(const EvalContext& ctx) {
  const TopKShape s = topk_shape(ctx.infer_context());
  const HostTensor& xt = ctx.input(0);
  const std::vector<double> x = xt.to_f64();
  const bool largest = ctx.node().attr_int("largest", 1) != 0;
  const int64_t len = xt.shape()[s.axis];
  const int64_t inner = shape_numel({xt.shape().begin() + s.axis + 1, xt.shape().end()});
  const int64_t outer = shape_numel({xt.shape().begin(), xt.shape().begin() + s.axis});
  std::vector<double> values(outer * s.k * inner);
  std::vector<int64_t> indices(values.size());
  std::vector<int64_t> order(len);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      auto at = [&](int64_t k) { return x[(o * len + k) * inner + i]; };
      for (int64_t k = 0; k < len; ++k) order[k] = k;
      std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
        return largest ? at(a) > at(b) : at(a) < at(b);
      });
      for (int64_t k = 0; k < s.k; ++k) {
        values[(o * s.k + k) * inner + i] = at(order[k]);
        indices[(o * s.k + k) * inner + i] = order[k];
      }
    }
  return {HostTensor::from_f64(xt.dtype(), s.out, values),
          HostTensor::from_i64(DataType::i64(), s.out, indices)};
}

}  // namespace

void add_reduce_ops(OpList& ops) {
  ops.push_back(reduce("ReduceSum", ReduceKind::Sum));
  ops.push_back(reduce("ReduceMean", ReduceKind::Mean));
  ops.push_back(reduce("ReduceMax", ReduceKind::Max));
  ops.push_back(reduce("ReduceMin", ReduceKind::Min));
  ops.push_back(reduce("ReduceProd", ReduceKind::Prod));
  ops.push_back(reduce("ReduceSumSquare", ReduceKind::SumSquare));
  ops.push_back(reduce("ReduceL1", ReduceKind::L1));
  ops.push_back(reduce("ReduceL2", ReduceKind::L2));
  ops.push_back(reduce("ReduceLogSum", ReduceKind::LogSum));
  ops.push_back(reduce("ReduceLogSumExp", ReduceKind::LogSumExp));
  ops.push_back(arg_extreme("ArgMax", true));
  ops.push_back(arg_extreme("ArgMin", false));

  OpDef cumsum{"CumSum", {"exclusive", "reverse"}, 2, 2};
  cumsum.infer = [](const InferContext& ctx) -> std::vector<TensorType> {
    user_check(shape_numel(ctx.shape(1)) == 1) << "CumSum axis must be a scalar";
    return {ctx.input(0)};
  };
  cumsum.eval = eval_cumsum;
  ops.push_back(std::move(cumsum));

  OpDef topk{"TopK", {"axis", "largest", "sorted"}, 2, 2, 1, 2};
  topk.infer = [](const InferContext& ctx) -> std::vector<TensorType> {
    const TopKShape s = topk_shape(ctx);
    return {{ctx.dtype(0), s.out}, {DataType::i64(), s.out}};
  };
  topk.eval = eval_topk;
  ops.push_back(std::move(topk));
}

}  // namespace kiln::graph
