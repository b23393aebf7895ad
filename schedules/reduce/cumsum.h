// ONNX CumSum: running sums along one axis (RoBERTa numbers its tokens by the cumulative sum
// of the attention mask).
//
// Workload "cumsum": outer, reduced, inner, exclusive (0/1: leave out the element itself),
// reverse (0/1: sum from the end). X and Y are [outer, reduced, inner], the tensor flattened
// around its axis. Y[o, r, i] sums X[o, k, i] over k <= r (k < r exclusive; k >= r, k > r in
// reverse) in f32. Each output element sums its own prefix, so the work is reduced^2 / 2 per
// row: meant for the sequence lengths of token positions, not for long signals.
#pragma once

#include "schedules/op_template.h"

namespace kiln::schedules {

// "cumsum.rows": outer rows in parallel.
const OpTemplate& cumsum_template();

}  // namespace kiln::schedules
