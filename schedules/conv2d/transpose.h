// Transposed 2-D convolution (ONNX ConvTranspose: the upsampling of segmentation and OCR
// heads such as DBNet's, U-Net decoders), NCHW.
//
// Workload "conv2d_transpose": N, C, H, W (input), O (output channels), KH, KW, SH, SW
// (strides), DH, DW (dilations), PH, PW (the padding removed at the top and left of the
// full output), OH, OW (the output size: by default the full size minus PH / PW at both ends;
// larger with ONNX's output_padding, smaller with asymmetric pads), groups. The weight is [C, O / groups, KH, KW] as in ONNX. Input element
// (iy, ix) contributes to output (iy * SH - PH + ky * DH, ix * SW - PW + kx * DW). Epilogues as
// conv2d's (schedules/epilogue.h): bias, activations, residual. dtypes f32, f16, bf16 with f32
// accumulation.
#pragma once

#include "schedules/op_template.h"

namespace kiln::schedules {

// "conv2d_transpose.direct": each output element gathers the input elements and taps that
// reach it (the taps whose offset is not a multiple of the stride are skipped by a guard);
// the (n, o) planes run in parallel.
const OpTemplate& conv2d_transpose_template();

}  // namespace kiln::schedules
