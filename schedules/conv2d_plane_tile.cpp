#include "schedules/conv2d_plane_tile.h"

#include "compiler/base/error.h"

namespace kiln::schedules {

void schedule_plane_tile(te::Schedule& sch, const te::Tensor& out, const te::Tensor& acc,
                         const TileKnobs& k, const std::vector<ir::IterVar>& reduce_order,
                         const ir::IterVar& chunked, int64_t chunk) {
  internal_check(chunk > 0) << "schedule_plane_tile: chunk must be positive, got " << chunk;
  // The epilogue stage: one plane of one output block per (n, b) iteration, vectorized
  // along the block; it reads the finished accumulators from the stack buffer.
  te::Stage os = sch[out];
  ir::IterVar nb = os.fuse(os.axis(0), os.axis(1));
  auto [lv, ll] = os.split(os.axis(4), k.lanes);
  if (k.parallel != 0) os.parallel(nb);
  os.unroll(lv);
  os.vectorize(ll);

  te::Stage as = sch[acc];
  as.set_scope(ir::MemScope::Local);
  as.compute_at(os, nb);
  auto [xo, xi] = as.split(as.axis(3), k.reg_n);
  auto [alv, all] = as.split(as.axis(4), k.lanes);
  auto [co, ci] = as.split(chunked, chunk);
  std::vector<ir::IterVar> red;
  for (const ir::IterVar& r : reduce_order) red.push_back(r.get() == chunked.get() ? ci : r);
  if (k.k_unroll > 1) {
    auto [ko, ki] = as.split(red.back(), k.k_unroll);
    red.back() = ko;
    red.push_back(ki);
  }
  // The chunk loop outside the rows: its weights (chunk x KH x KW x icb x bn) stay in L1
  // while every row of the plane uses them.
  std::vector<ir::IterVar> order = {as.axis(0), as.axis(1), co, as.axis(2), xo};
  order.insert(order.end(), red.begin(), red.end());
  order.insert(order.end(), {xi, alv, all});
  as.reorder(order);
  if (k.k_unroll > 1) as.unroll(red.back());
  if (k.unroll_kw && k.kw_axis) as.unroll(k.kw_axis);
  if (k.unroll_kh && k.kh_axis) as.unroll(k.kh_axis);
  as.unroll(xi);
  as.unroll(alv);
  as.vectorize(all);
}

}  // namespace kiln::schedules
