#include "schedules/dense.h"

#include "ir/error.h"

namespace kiln::schedules {

using ir::DataType;
using ir::Expr;
using ir::Var;

DenseOp dense_compute(const DenseShape& s, DataType in, DataType out) {
  user_check(s.m > 0 && s.n > 0 && s.k > 0) << "dense: M, N, K must be positive, got " << s.m
                                            << ", " << s.n << ", " << s.k;
  DenseOp op;
  op.a = te::placeholder({s.m, s.k}, in, "A");
  op.b = te::placeholder({s.k, s.n}, in, "B");
  ir::IterVar k = te::reduce_axis(s.k, "k");
  DataType acc = DataType::f32();
  op.c = te::compute(
      {s.m, s.n},
      [&](Var i, Var j) {
        Expr prod = ir::make_cast(acc, op.a(i, k)) * ir::make_cast(acc, op.b(k, j));
        return te::sum(prod, {k});
      },
      "C");
  if (out != acc) {
    te::Tensor c32 = op.c;
    op.c = te::compute({s.m, s.n}, [&](Var i, Var j) { return ir::make_cast(out, c32(i, j)); },
                       "C.out");
  }
  return op;
}

void dense_reference(const DenseShape& s, const float* a, const float* b, float* c) {
  for (int64_t i = 0; i < s.m; ++i)
    for (int64_t j = 0; j < s.n; ++j) {
      double acc = 0;
      for (int64_t k = 0; k < s.k; ++k) acc += double(a[i * s.k + k]) * double(b[k * s.n + j]);
      c[i * s.n + j] = static_cast<float>(acc);
    }
}

}  // namespace kiln::schedules
