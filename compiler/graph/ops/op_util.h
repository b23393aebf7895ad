// Helpers shared by the operator files: axis arithmetic, numpy broadcasting, loops over
// every element with broadcast operands, and the elementwise evaluation skeletons.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "compiler/graph/ops/op.h"

namespace kiln::graph {

// An axis in [-rank, rank) as a non-negative index; a UserError names `what` otherwise.
int64_t normalize_axis(int64_t axis, int64_t rank, const char* what = "axis");
// A list of axes normalized, each at most once.
std::vector<int64_t> normalize_axes(const std::vector<int64_t>& axes, int64_t rank,
                                    const char* what = "axes");

// numpy broadcasting of two shapes (a UserError names both when they do not broadcast).
std::vector<int64_t> broadcast_shapes(const std::vector<int64_t>& a, const std::vector<int64_t>& b);
// Strides (in elements) that read a tensor of shape `in` while walking `out`, which `in`
// broadcasts to: 0 along broadcast dimensions.
std::vector<int64_t> broadcast_strides(const std::vector<int64_t>& in,
                                       const std::vector<int64_t>& out);

// Calls f(out_index, offsets) for every element of `shape` in row-major order, where
// offsets[k] is the flat offset into operand k with strides strides[k].
template <typename F>
void for_each_index(const std::vector<int64_t>& shape,
                    const std::vector<std::vector<int64_t>>& strides, F&& f) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  if (n == 0) return;
  const size_t k = strides.size();
  const int rank = static_cast<int>(shape.size());
  std::vector<int64_t> offsets(k, 0), index(rank, 0);
  for (int64_t o = 0; o < n; ++o) {
    f(o, offsets.data());
    for (int d = rank - 1; d >= 0; --d) {
      ++index[d];
      for (size_t j = 0; j < k; ++j) offsets[j] += strides[j][d];
      if (index[d] < shape[d]) break;
      for (size_t j = 0; j < k; ++j) offsets[j] -= strides[j][d] * shape[d];
      index[d] = 0;
    }
  }
}

// Elementwise skeletons: read the operands in a compute type (double for float tensors,
// int64 otherwise), apply fn, write a tensor of `out`.
HostTensor map_f64(const HostTensor& x, DataType out, const std::function<double(double)>& fn);
HostTensor map_i64(const HostTensor& x, DataType out, const std::function<int64_t(int64_t)>& fn);
HostTensor zip_f64(const HostTensor& a, const HostTensor& b, DataType out,
                   const std::function<double(double, double)>& fn);
HostTensor zip_i64(const HostTensor& a, const HostTensor& b, DataType out,
                   const std::function<int64_t(int64_t, int64_t)>& fn);

// memcpy that accepts empty copies (of empty tensors, whose data pointers may be null).
void copy_bytes(std::byte* dst, const std::byte* src, size_t n);

// a * b and a + b, with a UserError naming `what` instead of overflowing int64.
int64_t checked_mul(int64_t a, int64_t b, const char* what);
int64_t checked_add(int64_t a, int64_t b, const char* what);

// UserErrors for inputs of the wrong element type.
void require_float(const InferContext& ctx, size_t input);
void require_same_dtype(const InferContext& ctx, size_t a, size_t b);

}  // namespace kiln::graph
