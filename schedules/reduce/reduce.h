// Reductions over a contiguous run of axes: ONNX ReduceSum, ReduceMean, ReduceMax, ReduceMin
// (and what GlobalMaxPool or a mean over H, W compute).
//
// Workloads "reduce_sum", "reduce_mean", "reduce_max", "reduce_min": outer, reduced, inner. X is
// [outer, reduced, inner] (any tensor whose reduced axes are neighbours, flattened that way:
// the same row-major memory), Y is [outer, inner]. Accumulation in f32 for every dtype (f32,
// f16, bf16), the result rounded once.
#pragma once

#include "schedules/op_template.h"

namespace kiln::schedules {

// A workload's outer, reduced and inner sizes (the arg and cumsum templates read the same
// three); UserError unless all are positive.
struct ReduceShape {
  int64_t outer, reduced, inner;
};
ReduceShape reduce_shape(const Workload& w);

// The reduce workload ops.
const std::vector<std::string>& reduce_ops();

// "reduce.rows.<op>": per outer row, a vector of partial results accumulated along the
// reduced axis (the inner elements when inner > 1, `partials` interleaved lanes of the row
// when it is 1), then combined; outer rows in parallel.
const OpTemplate& reduce_template(const std::string& op);

}  // namespace kiln::schedules
