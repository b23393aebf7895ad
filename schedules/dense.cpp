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

DenseOp dense_packed_compute(const DenseShape& s, int64_t nr, DataType in, DataType out) {
  user_check(s.m > 0 && s.n > 0 && s.k > 0) << "dense: M, N, K must be positive";
  user_check(nr > 0) << "dense: the packing width must be positive, got " << nr;
  DenseOp op;
  int64_t panels = (s.n + nr - 1) / nr;
  op.a = te::placeholder({s.m, s.k}, in, "A");
  op.b = te::placeholder({panels, s.k, nr}, in, "B.packed");
  ir::IterVar k = te::reduce_axis(s.k, "k");
  DataType acc = DataType::f32();
  op.c = te::compute(
      {s.m, s.n},
      [&](Var i, Var j) {
        Expr prod = ir::make_cast(acc, op.a(i, k)) * ir::make_cast(acc, op.b(j / nr, k, j % nr));
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

std::vector<float> pack_dense_b(const DenseShape& s, int64_t nr, const float* b) {
  int64_t panels = (s.n + nr - 1) / nr;
  std::vector<float> packed(static_cast<size_t>(panels * s.k * nr), 0.0f);
  for (int64_t p = 0; p < panels; ++p)
    for (int64_t k = 0; k < s.k; ++k)
      for (int64_t j = 0; j < nr && p * nr + j < s.n; ++j)
        packed[(p * s.k + k) * nr + j] = b[k * s.n + p * nr + j];
  return packed;
}

void schedule_dense_register_tile(te::Schedule& s, const DenseOp& op, const RegisterTile& t) {
  user_check(t.nr % t.lanes == 0) << "register tile: nr (" << t.nr << ") must be a multiple of "
                                  << "the vector width (" << t.lanes << ")";
  te::Tensor acc = s.cache_write(op.c);
  te::Stage c = s[op.c];
  auto [io, ii] = c.split(c.axis(0), t.mr);
  auto [jo, ji] = c.split(c.axis(1), t.nr);
  c.reorder({jo, io, ii, ji});
  c.parallel(jo);
  auto [jvo, jvi] = c.split(ji, t.lanes);
  c.vectorize(jvi);
  te::Stage a = s[acc];
  a.compute_at(c, io);
  auto [avo, avi] = a.split(a.axis(1), t.lanes);
  ir::IterVar k = a.reduce_axis(0);
  if (t.k_unroll > 1) {
    auto [ko, ki] = a.split(k, t.k_unroll);
    a.reorder({ko, ki, a.axis(0), avo, avi});
    a.unroll(ki);
  } else {
    a.reorder({k, a.axis(0), avo, avi});
  }
  a.unroll(a.axis(0));
  a.unroll(avo);
  a.vectorize(avi);
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
