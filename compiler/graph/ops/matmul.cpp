// Matrix products: MatMul (numpy semantics: 1-D operands promoted, batch dimensions
// broadcast) and Gemm (alpha * A' * B' + beta * C with optional transposes and a C that
// broadcasts to the result). Floats accumulate in double, integers in int64.
#include "compiler/graph/ops/einsum.h"
#include "compiler/graph/ops/op_util.h"

namespace kiln::graph {

namespace {

struct MatMulShape {
  std::vector<int64_t> batch;  // broadcast batch dimensions
  std::vector<int64_t> a_batch, b_batch;
  int64_t m, k, n;
  std::vector<int64_t> out;  // the result's shape (promoted dimensions removed)
};

MatMulShape matmul_shape(const InferContext& ctx) {
  require_same_dtype(ctx, 0, 1);
  std::vector<int64_t> a = ctx.shape(0), b = ctx.shape(1);
  user_check(!a.empty() && !b.empty())
      << "MatMul operands must have rank >= 1, got " << shape_str(a) << " and " << shape_str(b);
  const bool a_vector = a.size() == 1, b_vector = b.size() == 1;
  if (a_vector) a.insert(a.begin(), 1);
  if (b_vector) b.push_back(1);
  MatMulShape s;
  s.m = a[a.size() - 2];
  s.k = a.back();
  s.n = b.back();
  user_check(b[b.size() - 2] == s.k)
      << "MatMul inner dimensions differ: " << shape_str(ctx.shape(0)) << " x "
      << shape_str(ctx.shape(1));
  s.a_batch.assign(a.begin(), a.end() - 2);
  s.b_batch.assign(b.begin(), b.end() - 2);
  s.batch = broadcast_shapes(s.a_batch, s.b_batch);
  s.out = s.batch;
  if (!a_vector) s.out.push_back(s.m);
  if (!b_vector) s.out.push_back(s.n);
  return s;
}

std::vector<TensorType> infer_matmul(const InferContext& ctx) {
  return {{ctx.dtype(0), matmul_shape(ctx).out}};
}

// acc + a * b; integers wrap (C++ leaves their overflow undefined).
template <typename C>
C multiply_add(C acc, C a, C b) {
  if constexpr (std::is_integral_v<C>)
    return static_cast<C>(static_cast<uint64_t>(acc) +
                          static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
  return acc + a * b;
}

template <typename C>
std::vector<C> matmul_values(const MatMulShape& s, const std::vector<C>& a,
                             const std::vector<C>& b) {
  std::vector<C> y(shape_numel(s.batch) * s.m * s.n, C{0});
  std::vector<int64_t> a_strides = broadcast_strides(s.a_batch, s.batch);
  std::vector<int64_t> b_strides = broadcast_strides(s.b_batch, s.batch);
  for_each_index(s.batch, {a_strides, b_strides}, [&](int64_t o, const int64_t* off) {
    const C* pa = &a[off[0] * s.m * s.k];
    const C* pb = &b[off[1] * s.k * s.n];
    C* py = &y[o * s.m * s.n];
    for (int64_t i = 0; i < s.m; ++i)
      for (int64_t p = 0; p < s.k; ++p) {
        const C av = pa[i * s.k + p];
        for (int64_t j = 0; j < s.n; ++j)
          py[i * s.n + j] = multiply_add(py[i * s.n + j], av, pb[p * s.n + j]);
      }
  });
  return y;
}

std::vector<HostTensor> eval_matmul(const EvalContext& ctx) {
  const MatMulShape s = matmul_shape(ctx.infer_context());
  const HostTensor &a = ctx.input(0), &b = ctx.input(1);
  if (is_float_dtype(a.dtype()))
    return {HostTensor::from_f64(a.dtype(), s.out, matmul_values(s, a.to_f64(), b.to_f64()))};
  return {HostTensor::from_i64(a.dtype(), s.out, matmul_values(s, a.to_i64(), b.to_i64()))};
}

struct GemmShape {
  int64_t m, k, n;
  bool trans_a, trans_b;
};

GemmShape gemm_shape(const InferContext& ctx) {
  require_same_dtype(ctx, 0, 1);
  const auto &a = ctx.shape(0), &b = ctx.shape(1);
  user_check(a.size() == 2 && b.size() == 2)
      << "Gemm needs 2-D operands, got " << shape_str(a) << " and " << shape_str(b);
  GemmShape s;
  s.trans_a = ctx.node().attr_int("transA", 0) != 0;
  s.trans_b = ctx.node().attr_int("transB", 0) != 0;
  s.m = s.trans_a ? a[1] : a[0];
  s.k = s.trans_a ? a[0] : a[1];
  s.n = s.trans_b ? b[0] : b[1];
  const int64_t kb = s.trans_b ? b[1] : b[0];
  user_check(kb == s.k) << "Gemm inner dimensions differ: A " << shape_str(a) << " (transA "
                        << s.trans_a << "), B " << shape_str(b) << " (transB " << s.trans_b << ")";
  if (ctx.has_input(2)) {
    require_same_dtype(ctx, 0, 2);
    const std::vector<int64_t> mn = {s.m, s.n};
    user_check(ctx.shape(2).size() <= 2 && broadcast_shapes(ctx.shape(2), mn) == mn)
        << "Gemm C of shape " << shape_str(ctx.shape(2)) << " does not broadcast to "
        << shape_str(mn);
  }
  return s;
}

std::vector<TensorType> infer_gemm(const InferContext& ctx) {
  const GemmShape s = gemm_shape(ctx);
  return {{ctx.dtype(0), {s.m, s.n}}};
}

std::vector<HostTensor> eval_gemm(const EvalContext& ctx) {
  const GemmShape s = gemm_shape(ctx.infer_context());
  const double alpha = ctx.node().attr_float("alpha", 1.0f);
  const double beta = ctx.node().attr_float("beta", 1.0f);
  const std::vector<double> a = ctx.input(0).to_f64(), b = ctx.input(1).to_f64();
  std::vector<double> y(s.m * s.n, 0.0);
  for (int64_t i = 0; i < s.m; ++i)
    for (int64_t p = 0; p < s.k; ++p) {
      const double av = s.trans_a ? a[p * s.m + i] : a[i * s.k + p];
      for (int64_t j = 0; j < s.n; ++j)
        y[i * s.n + j] += av * (s.trans_b ? b[j * s.k + p] : b[p * s.n + j]);
    }
  for (double& v : y) v *= alpha;
  if (ctx.has_input(2)) {
    const HostTensor& c = ctx.input(2);
    const std::vector<double> cv = c.to_f64();
    const std::vector<int64_t> mn = {s.m, s.n};
    for_each_index(mn, {broadcast_strides(c.shape(), mn)},
                   [&](int64_t o, const int64_t* off) { y[o] += beta * cv[off[0]]; });
  }
  return {HostTensor::from_f64(ctx.input(0).dtype(), {s.m, s.n}, y)};
}

}  // namespace

void add_matmul_ops(OpList& ops) {
  OpDef matmul{"MatMul", {}, 2, 2};
  matmul.infer = infer_matmul;
  matmul.eval = eval_matmul;
  ops.push_back(std::move(matmul));

  OpDef gemm{"Gemm", {"alpha", "beta", "transA", "transB"}, 2, 3};
  gemm.infer = infer_gemm;
  gemm.eval = eval_gemm;
  ops.push_back(std::move(gemm));
  ops.push_back(einsum_op());
}

}  // namespace kiln::graph
