// A max or a sum over the last axis of each row, as the row kernels (softmax, layer_norm,
// attention) compute it: `r` interleaved vector partials over the row's whole chunks of r
// (the partial l takes columns l, l + r, l + 2r, ...), then a reduction of the partials, then
// the columns past the last whole chunk one by one. The first loop is a vector loop over l,
// so the row reduction vectorizes without an rfactor primitive, and every load is a plain
// vector load: a clamped index for the last partial chunk became a gather, which ran
// softmax over 1214-wide rows at a quarter of its speed.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "compiler/te/schedule.h"

namespace kiln::schedules {

struct RowReduce {
  te::Tensor part;   // rows x r partials over the whole chunks (undefined when r > n)
  te::Tensor whole;  // rows: the partials reduced
  te::Tensor tail;   // rows: the columns past the whole chunks (undefined when r divides n)
  te::Tensor total;  // rows: the result (whole itself when there is no tail)
};

// The reduction over columns 0..n-1 of `value(row indices, column)` for each row of the
// leading extents `rows`. Any of them may be a run-time size (run_time_dims.h); a run-time
// n has both a whole part and a tail, of extents computed at run time.
RowReduce row_reduce(const std::vector<ir::Expr>& rows, ir::Expr n, int64_t r, bool is_max,
                     const std::function<ir::Expr(const std::vector<ir::Expr>&, ir::Expr)>& value,
                     const std::string& name);

// With a `parent`, the total lives in a register inside parent's loop `at`; otherwise it is
// a root stage (a workspace vector) with its own row loop, parallel when asked. The other
// stages run inside the total's innermost row loop, the partials vectorized.
void schedule_row_reduce(te::Schedule& sch, const RowReduce& rr, const te::Stage* parent,
                         const ir::IterVar& at, bool parallel);

}  // namespace kiln::schedules
