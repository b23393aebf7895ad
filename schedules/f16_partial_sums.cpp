// f16 accumulation in K blocks with f32 partial sums (see f16_partial_sums.h).
#include "schedules/f16_partial_sums.h"

#include "compiler/base/error.h"

namespace kiln::schedules {

using ir::DataType;
using ir::Expr;
using ir::IterVar;
using ir::Var;

F16AccKind f16_acc_kind(int64_t knob) {
  user_check(knob >= 0 && knob <= 2)
      << "f16_acc must be 0 (f32), 1 (f16) or 2 (f16 blocks, f32 partial sums), got " << knob;
  return static_cast<F16AccKind>(knob);
}

F16PartialSums f16_partial_sums(
    const std::vector<int64_t>& spatial, const std::vector<int64_t>& extents,
    const std::vector<std::string>& names, size_t inner_count,
    const std::function<Expr(const std::vector<Expr>&, const std::vector<Expr>&)>& product,
    const std::string& name) {
  internal_check(extents.size() == names.size() && inner_count >= 1 &&
                 inner_count < extents.size())
      << "f16_partial_sums: " << inner_count << " inner of " << extents.size() << " axes";
  const size_t outer_count = extents.size() - inner_count;
  F16PartialSums p;
  for (size_t i = 0; i < extents.size(); ++i)
    (i < outer_count ? p.outer : p.inner).push_back(te::reduce_axis(extents[i], names[i]));

  std::vector<Expr> part_shape(spatial.begin(), spatial.end());
  for (size_t i = 0; i < outer_count; ++i) part_shape.push_back(Expr(extents[i]));
  p.part = te::compute(
      part_shape,
      [&](const std::vector<Var>& v) -> Expr {
        std::vector<Expr> sp(v.begin(), v.begin() + static_cast<long>(spatial.size()));
        std::vector<Expr> red(v.begin() + static_cast<long>(spatial.size()), v.end());
        for (const IterVar& r : p.inner) red.push_back(r->var);
        return te::sum(product(sp, red), p.inner);
      },
      name + ".part");

  std::vector<Expr> acc_shape(spatial.begin(), spatial.end());
  p.acc = te::compute(
      acc_shape,
      [&](const std::vector<Var>& v) -> Expr {
        std::vector<Expr> idx(v.begin(), v.end());
        for (const IterVar& r : p.outer) idx.push_back(r->var);
        return te::sum(ir::make_cast(DataType::f32(), p.part(idx)), p.outer);
      },
      name);
  return p;
}

void schedule_f16_partial_sums(te::Schedule& sch, const F16PartialSums& p, int64_t lanes,
                               int64_t k_unroll, const std::vector<IterVar>& unroll) {
  // acc's tile ends (..., innermost reduce loop, rows, vectors, lanes): one block's f16
  // sums are computed at that reduce loop, once per block.
  te::Stage acc = sch[p.acc];
  const std::vector<IterVar>& leaves = acc.leaf_axes();
  internal_check(leaves.size() >= 4 && leaves[leaves.size() - 4]->kind == ir::IterKind::Reduce)
      << "schedule_f16_partial_sums: acc's tile is not (reduce, rows, vectors, lanes)";
  te::Stage part = sch[p.part];
  part.set_scope(ir::MemScope::Local);
  part.compute_at(acc, leaves[leaves.size() - 4]);

  const size_t spatial = p.acc.ndim();
  auto [vec, lane] = part.split(part.axis(spatial - 1), lanes);
  std::vector<IterVar> order;
  for (size_t i = 0; i + 2 < spatial; ++i) order.push_back(part.axis(i));
  for (size_t i = spatial; i < p.part.ndim(); ++i) order.push_back(part.axis(i));
  std::vector<IterVar> red = p.inner;
  if (k_unroll > 1) {
    auto [ko, ki] = part.split(red.back(), k_unroll);
    red.back() = ko;
    red.push_back(ki);
  }
  order.insert(order.end(), red.begin(), red.end());
  const IterVar rows = part.axis(spatial - 2);
  order.insert(order.end(), {rows, vec, lane});
  part.reorder(order);
  if (k_unroll > 1) part.unroll(red.back());
  for (const IterVar& iv : unroll) part.unroll(iv);
  part.unroll(rows);
  part.unroll(vec);
  part.vectorize(lane);
}

}  // namespace kiln::schedules
