// Batched matrix multiply, the attention matmuls: C[b] = op(A[b]) · op(B[b]).
//
// Workload "batch_matmul": B (batch, e.g. heads), M, N, K, transpose_a, transpose_b (0/1).
// A is [B, M, K] ([B, K, M] with transpose_a), B is [B, K, N] ([B, N, K] with transpose_b:
// Q·K^T in attention), C is [B, M, N]. dtypes f32, f16, bf16 with f32 accumulation and the
// result stored in the input type.
#pragma once

#include "compiler/te/schedule.h"
#include "schedules/op_template.h"

namespace kiln::schedules {

// "batch_matmul.tiled": an mr x nr register tile of C accumulates over all of K, as in
// dense.packed. Unlike dense's weights, both operands are activations, so nothing can be
// packed at compile time: with "pack_b" the kernel first copies B into nr-wide panels
// contiguous along K (in its workspace, batches in parallel), which turns transpose_b's
// strided column reads into one sequential pass; without it the tile reads B directly.
const OpTemplate& batch_matmul_template();

// The register tile of a batched product: `tile` is a [batch, rows, cols] accumulation
// computed inside its consumer's row block. The reduction outermost (split by k_unroll, its
// inner part unrolled), then the rows and the vectors unrolled, the lanes vectorized.
// Shared with attention (attention.h), whose two products are such tiles.
void schedule_matmul_tile(te::Stage& tile, int64_t lanes, int64_t k_unroll = 1);

}  // namespace kiln::schedules
