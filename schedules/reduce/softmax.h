// Row normalisations over the last axis: softmax and layer_norm.
//
// Workloads (leading axes flattened into M rows; the graph compiler does that flattening,
// which is free in row-major memory):
//   "softmax":    M, N.  Y[i, j] = exp(X[i, j] - max_j X[i, :]) / sum_j exp(...), the max
//                 subtracted first so no exp overflows.
//   "layer_norm": M, N, eps (a real; default 1e-5 as in PyTorch; BERT's
//                 is 1e-12).  Inputs X [M, N], gamma [N], beta [N];
//                 Y = (X - mean) / sqrt(var + eps) * gamma + beta, var the biased variance,
//                 computed in two passes (no E[x^2] - mean^2 cancellation).
// dtypes f32, f16, bf16: everything is computed in f32, the result rounded once.
// exp is the IR polynomial of schedules/math.h (generated code links no libm).
#pragma once

#include "schedules/op_template.h"

namespace kiln::schedules {

// "softmax.rows" and "layer_norm.rows": each row's reductions run as `partials` interleaved
// vector accumulators (a manual rfactor, so they vectorize), then combine across lanes.
// With "row_fused" every pass of one row runs inside the row loop (the row stays in L1; the
// row max / mean is computed once per consumer, since a stage can be computed inside only
// one consumer's loop); without it every pass is its own parallel loop over all rows with
// its results in the workspace. Softmax's "row_fused" 2 (its fallback for rows up to 16384)
// buffers each row's exponentials on the stack: one exp per element instead of two.
const OpTemplate& softmax_template();
const OpTemplate& layer_norm_template();

}  // namespace kiln::schedules
