// Integer dense: C[M, N] = requantize(Σk (A[m, k] - a_zero) · B[k, n] + bias[n]) with A u8 or
// i8 (an activation), B int8 weights (zero point 0, as symmetric per-channel quantization
// gives them), sums exact in int32: the kernel behind QLinearMatMul, MatMulInteger and
// quantized Gemm.
//
//   dense.int8   A is widened once per call into i16 with its zero point subtracted (an
//                exact value in [-255, 255]); B is packed at compile time into i16 pairs
//                (the VNNI layout of dense.bf16.x86); the register tile adds pairwise i16
//                dots into i32 (schedules/intrinsics.h pair_dot_i16: `vpdpwssd` with
//                AVX512-VNNI, `vpmaddwd` + add on AVX2/AVX-512, widening multiply-adds on
//                AArch64). Nothing saturates at 16 bits, unlike `vpmaddubsw` on raw bytes:
//                every product and pair sum is exact, whatever the weights.
//   dense.int8.dot  where the target has a byte dot instruction (intrinsics.h quad_dot_i8:
//                `vpdpbusd`, `sdot`): A copied once per call into the instruction's type
//                (u8 on x86, i8 on AArch64; moved by 128 where it differs), K padded to whole
//                quads; B packed [N/nr][K/4][nr][4] with each column's zero * Σk B after it,
//                which the epilogue subtracts (Σ (a - zero) b = Σ a b - zero Σ b). Four
//                multiply-adds per 32-bit lane; the default wherever it applies.
//
// Workload: op "dense", dtype u8 or i8 (A's type), M, N, K and the parameters of
// schedules/requantize.h (a_zero, requantize, y_zero, y_lo, y_hi); inputs A [M, K], B [K, N],
// with epilogue "bias" an int32 bias [N], when requantizing an f32 scale [N]; output C [M, N]
// in dtype, or int32 with requantize=0 (MatMulInteger).
#pragma once

#include "schedules/op_template.h"

namespace kiln::schedules {

const OpTemplate& dense_int8_template();
const OpTemplate& dense_int8_dot_template();

}  // namespace kiln::schedules
