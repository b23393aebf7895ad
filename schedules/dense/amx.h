// bf16 dense on Intel AMX tiles: "dense.bf16.amx", C[M, N] = A[M, K] · B[K, N], the GEMM
// form of 1x1 convolutions too (M = pixels, N = output channels, K = input channels).
//
// C is computed in blocks of (16 * row_tiles) x (16 * col_tiles) f32 accumulators held in
// AMX tile registers over all of K (schedules/amx_tile.h): per 32 K values, row_tiles A
// tiles and col_tiles B tiles feed row_tiles * col_tiles `tdpbf16ps`. B (the weights) is
// packed once into VNNI panels of 16 * col_tiles columns, K padded to a multiple of 32
// with zeros; A is read in place when the blocks tile M and K exactly, and otherwise copied
// first into a zero-padded buffer (O(M*K) work, so tile loads never read past A). Output
// bf16, or f32 with param out_f32=1; epilogues as "dense.packed".
//
// Offered only for targets with amx-tile and amx-bf16 (never to a CPU without AMX);
// preferred there over dense.bf16.x86 (vdpbf16ps), which is ~8x slower per core.
#pragma once

#include <vector>

#include "schedules/dense/dense.h"
#include "schedules/op_template.h"

namespace kiln::schedules {

const OpTemplate& dense_bf16_amx_template();

}  // namespace kiln::schedules
