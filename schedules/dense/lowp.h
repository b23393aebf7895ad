// Low-precision dense: C[M, N] = A[M, K] · B[K, N] with bf16 or f16 inputs, through the
// instructions that make half precision pay: x86 `vdpbf16ps`, AArch64 BFMMLA, and
// AArch64 half-precision `fmla .8h`. Each template packs B (the weights, constant in a
// network) into the layout its instruction reads, keeps a register tile of accumulators
// over all of K, and fuses the same epilogues as "dense.packed" (schedules/dense/dense.h).
//
//   dense.bf16.x86  bf16 on x86 with avx512bf16. B in the VNNI layout (pairs of adjacent K),
//                   one `vdpbf16ps zmm` per 16 columns x 2 K per row of the tile; A
//                   broadcasts a 32-bit pair. Output bf16, or f32 with param out_f32=1.
//   dense.bf16.arm  bf16 on AArch64 with +bf16. BFMMLA: a 2x4 block of A times a 4x2 block
//                   of B into a 2x2 f32 tile per instruction; A is repacked inside the
//                   kernel into 2-row interleaved K=4 blocks, B packed 2-column interleaved.
//                   Knob bfdot=1 uses BFDOT instead (the x86 scheme at 128 bits).
//   dense.f16.arm   f16 on AArch64 with +fullfp16, 8 halves per vector. Knob f16_acc: 2
//                   (default) accumulates in f16 with `fmla .8h` within K blocks of kb and
//                   adds each block into f32 (f16_partial_sums.h: twice f32's lanes, f16
//                   tolerance on long K); 1 all of K in f16 (error grows like sqrt(K)
//                   half-ulps, a looser tolerance); 0 everything in f32.
// All accumulate in f32 unless told otherwise; K, M and N need not divide the tiles (the
// packed B is zero-padded, A's missing K values read as zero).
#pragma once

#include <vector>

#include "schedules/dense/dense.h"
#include "schedules/op_template.h"

namespace kiln::schedules {

const OpTemplate& dense_bf16_x86_template();
const OpTemplate& dense_bf16_arm_template();
const OpTemplate& dense_f16_arm_template();

// Logical B[K, N] (row-major floats) -> [ceil(N/nr)][pairs][nr][2], zero-padded: the
// VNNI layout, so one 64-byte load gives `vdpbf16ps` 16 columns x 2 K values. `pairs` is
// ceil(K/2) unless given (more: K padded with zero rows, as AMX tiles want).
std::vector<float> pack_dense_b_vnni(const DenseShape& s, int64_t nr, const float* b,
                                     int64_t pairs = 0);
// Logical B[K, N] -> [ceil(N/nr)][ceil(K/4)][nr/2][2][4], zero-padded: per column pair, a
// 2x4 block (two columns, four K values each) that is BFMMLA's second operand.
std::vector<float> pack_dense_b_bfmmla(const DenseShape& s, int64_t nr, const float* b);

}  // namespace kiln::schedules
