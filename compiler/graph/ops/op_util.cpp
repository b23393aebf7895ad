#include "compiler/graph/ops/op_util.h"

#include <cstring>
#include <set>

namespace kiln::graph {

int64_t normalize_axis(int64_t axis, int64_t rank, const char* what) {
  user_check(axis >= -rank && axis < rank)
      << what << " " << axis << " is out of range for rank " << rank << " (valid: " << -rank
      << " to " << rank - 1 << ")";
  return axis < 0 ? axis + rank : axis;
}

std::vector<int64_t> normalize_axes(const std::vector<int64_t>& axes, int64_t rank,
                                    const char* what) {
  std::vector<int64_t> out;
  std::set<int64_t> seen;
  for (int64_t a : axes) {
    int64_t n = normalize_axis(a, rank, what);
    user_check(seen.insert(n).second) << what << " names axis " << n << " twice";
    out.push_back(n);
  }
  return out;
}

std::vector<int64_t> broadcast_shapes(const std::vector<int64_t>& a,
                                      const std::vector<int64_t>& b) {
  const size_t rank = std::max(a.size(), b.size());
  std::vector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    user_check(da == db || da == 1 || db == 1)
        << "shapes " << shape_str(a) << " and " << shape_str(b) << " do not broadcast";
    out[i] = da == 1 ? db : da;
  }
  return out;
}

std::vector<int64_t> broadcast_strides(const std::vector<int64_t>& in,
                                       const std::vector<int64_t>& out) {
  internal_check(in.size() <= out.size())
      << "broadcast of rank " << in.size() << " to " << out.size();
  std::vector<int64_t> strides(out.size(), 0);
  const std::vector<int64_t> dense = shape_strides(in);
  const size_t lead = out.size() - in.size();
  for (size_t i = 0; i < in.size(); ++i) {
    internal_check(in[i] == out[lead + i] || in[i] == 1)
        << "broadcast of " << shape_str(in) << " to " << shape_str(out);
    strides[lead + i] = in[i] == 1 ? 0 : dense[i];
  }
  return strides;
}

HostTensor map_f64(const HostTensor& x, DataType out, const std::function<double(double)>& fn) {
  std::vector<double> v = x.to_f64();
  for (double& e : v) e = fn(e);
  return HostTensor::from_f64(out, x.shape(), v);
}

HostTensor map_i64(const HostTensor& x, DataType out, const std::function<int64_t(int64_t)>& fn) {
  std::vector<int64_t> v = x.to_i64();
  for (int64_t& e : v) e = fn(e);
  return HostTensor::from_i64(out, x.shape(), v);
}

namespace {

template <typename C, typename Fn>
std::vector<C> zip_values(const std::vector<C>& a, const std::vector<int64_t>& sa,
                          const std::vector<C>& b, const std::vector<int64_t>& sb,
                          const std::vector<int64_t>& out_shape, const Fn& fn) {
  std::vector<C> r(shape_numel(out_shape));
  for_each_index(out_shape, {broadcast_strides(sa, out_shape), broadcast_strides(sb, out_shape)},
                 [&](int64_t o, const int64_t* off) { r[o] = fn(a[off[0]], b[off[1]]); });
  return r;
}

}  // namespace

HostTensor zip_f64(const HostTensor& a, const HostTensor& b, DataType out,
                   const std::function<double(double, double)>& fn) {
  std::vector<int64_t> shape = broadcast_shapes(a.shape(), b.shape());
  return HostTensor::from_f64(out, shape,
                              zip_values(a.to_f64(), a.shape(), b.to_f64(), b.shape(), shape, fn));
}

HostTensor zip_i64(const HostTensor& a, const HostTensor& b, DataType out,
                   const std::function<int64_t(int64_t, int64_t)>& fn) {
  std::vector<int64_t> shape = broadcast_shapes(a.shape(), b.shape());
  return HostTensor::from_i64(out, shape,
                              zip_values(a.to_i64(), a.shape(), b.to_i64(), b.shape(), shape, fn));
}

void copy_bytes(std::byte* dst, const std::byte* src, size_t n) {
  if (n) std::memcpy(dst, src, n);
}

int64_t checked_mul(int64_t a, int64_t b, const char* what) {
  int64_t r;
  user_check(!__builtin_mul_overflow(a, b, &r)) << what << " overflows 64-bit integers";
  return r;
}

int64_t checked_add(int64_t a, int64_t b, const char* what) {
  int64_t r;
  user_check(!__builtin_add_overflow(a, b, &r)) << what << " overflows 64-bit integers";
  return r;
}

void require_float(const InferContext& ctx, size_t input) {
  user_check(is_float_dtype(ctx.dtype(input)))
      << ctx.node().op_type << " needs a floating-point input " << input << ", got "
      << ctx.dtype(input).str();
}

void require_same_dtype(const InferContext& ctx, size_t a, size_t b) {
  user_check(ctx.dtype(a) == ctx.dtype(b))
      << ctx.node().op_type << " needs inputs " << a << " and " << b << " of one element type, got "
      << ctx.dtype(a).str() << " and " << ctx.dtype(b).str();
}

}  // namespace kiln::graph
