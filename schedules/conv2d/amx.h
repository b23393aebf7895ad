// bf16 direct convolution on Intel AMX tiles: "conv2d.bf16.amx", stride 1, dilation 1,
// groups 1 (ResNet's 3x3 layers), any kernel size and padding.
//
// Implicit GEMM over a flattened padded image: the input is copied once into
// [N][C/32][(H+2p) * (W+2p) + slack][32] (zero padding, 32 channels = one tile row of bf16).
// Output pixel (y, x) is flat position q = y * Wp + x; at tap (ky, kx) it reads flat pixel
// q + ky * Wp + kx, so 16 consecutive q are one tile load with a 64-byte stride. A block of
// row_tiles x 16 consecutive q x col_tiles x 16 output channels stays in AMX tile registers
// (f32) over all channel blocks and taps, one `tdpbf16ps` per 16x16 C tile and tap per 32
// channels (schedules/amx_tile.h). A block may span the end of one output row and the start
// of the next (small images waste no tile rows); the positions x >= OW between them read
// padding and are never stored. The f32 accumulators of an image and output-channel block
// are computed together where their positions are whole blocks (kept in L2), otherwise at
// the root; an output pass applies the epilogue. Weights packed once into VNNI pairs
// [O/ocb][C/32][KH][KW][16][ocb][2]; data NCHW[32]c, output NCHW[ocb]c with ocb = 16 *
// col_tiles; epilogues and out_f32 as conv2d.bf16.x86.
//
// Offered only where the target has amx-tile and amx-bf16; preferred there over
// conv2d.bf16.x86 (vdpbf16ps).
#pragma once

#include "schedules/op_template.h"

namespace kiln::schedules {

const OpTemplate& conv2d_bf16_amx_template();

}  // namespace kiln::schedules
