#include "schedules/conv2d/plane_tile.h"

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
  auto [co, ci] = as.split(chunked, chunk);
  std::vector<ir::IterVar> red;
  for (const ir::IterVar& r : reduce_order) red.push_back(r.get() == chunked.get() ? ci : r);
  // The chunk loop outside the rows: its weights (chunk x KH x KW x icb x bn) stay in L1
  // while every row of the plane uses them.
  order_tile_reduction(as, k, {as.axis(0), as.axis(1), co, as.axis(2), xo}, red, xi);
}

}  // namespace kiln::schedules
