// Attention without its score matrix in memory: O[b] = softmax(Q[b] · Kt[b]) · V[b].
//
// Workload "attention": B (batch x heads), M (queries), N (keys), D (head size of Q and K),
// E (head size of V). Inputs Q [B, M, D], Kt [B, D, N] (the keys transposed, as exporters
// write Q·K^T: MatMul(Q, Transpose(K))), V [B, N, E]; output O [B, M, E]. Any scaling of the
// scores is already on Q (network/scale_matmul_operand.h). f32.
// With mask = 1, a fourth input Mask [mask_batches, mask_rows, N] is added to the scores
// before the softmax, broadcast as masks are: batch b reads the mask's batch
// (b / mask_every) % mask_batches (mask_every: the heads per mask, for BERT's [batch, 1, 1,
// N]), and every query row reads its row 0 (mask_rows 1) or its own (mask_rows M: a
// causal or a relative-position mask).
//
// Unfused, attention writes B x M x N scores, the softmax reads and rewrites them and P·V
// reads them again: at 1214 tokens (AST) that is 23 MB per head group, three passes at memory
// speed. Here the scores live one block of rows at a time in stack buffers that stay in L1/L2.
#pragma once

#include "schedules/op_template.h"

namespace kiln::schedules {

// "attention.row_blocks": per block of mr query rows, S = Q·Kt in mr x nr_vecs register
// tiles into a stack buffer, the row max, P = exp(S - max) into a second buffer with its
// row sums, then O = P·V in mr x ev register tiles scaled by 1 / sum. Blocks run in
// parallel over B (over the blocks when B is 1). Applies while one row's scores fit a block
// buffer (N <= 16384; mr * N <= 16384 bounds the choices of mr).
const OpTemplate& attention_template();

// The most keys (N) a workload may have: one row of scores fills a block buffer.
constexpr int64_t kAttentionMaxKeys = 16384;

}  // namespace kiln::schedules
