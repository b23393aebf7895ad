// Integer conv2d: out = requantize(Σ (data - a_zero) · weight + bias) with u8 or i8 data, int8
// weights (zero point 0) and exact int32 sums (schedules/requantize.h): the kernel behind
// QLinearConv and ConvInteger.
//
//   conv2d.int8  the register tile of conv2d.bf16.x86 on integers, groups 1: data NCHW[ic_bn]c
//                (ic_bn even), copied once per call into i16 with the zero point subtracted
//                and the padding applied (the padding is a_zero, so 0 after the
//                subtraction); weights packed at compile time [O/oc_bn][C/ic_bn][KH][KW]
//                [ic_bn/2][oc_bn][2] as i16 (VNNI pairs); per channel pair and tap, one
//                broadcast 32-bit pair per pixel and `pair_dot_i16` into int32 accumulators
//                (`vpdpwssd` with AVX512-VNNI, `vpmaddwd` + add on AVX2/AVX-512, widening
//                multiply-adds on AArch64): no 16-bit saturation whatever the weights.
//   conv2d.int8.dot  the same tile on 8-bit channel quads, where the target has a byte dot
//                instruction (intrinsics.h quad_dot_i8: `vpdpbusd` with AVX512-VNNI or
//                AVX-VNNI, `sdot` with AArch64 dotprod), so four multiply-adds per 32-bit
//                lane, twice conv2d.int8's: data NCHW[ic_bn]c (ic_bn a multiple of 4) read as
//                it is where it needs no padding and is already the instruction's type (u8
//                on x86, i8 on AArch64), else copied once per call, moved by 128 to that
//                type, the padding its zero point; weights packed [O/oc_bn][C/ic_bn][KH][KW]
//                [ic_bn/4][oc_bn][4] with each channel's zero * Σ weights after them, which
//                the epilogue subtracts: Σ (a - zero) w = Σ a w - zero Σ w, exact in int32.
//                The default wherever it applies.
//   conv2d.int8.depthwise  groups == C == O: conv2d.depthwise's register tile (vectors of
//                channels, a W tile) on the data minus its zero point, copied once per call
//                into f32 with the padding (0 after the subtraction): every product and sum of
//                up to 513 taps is an integer below 2^24, exact in f32, so the tile is FMAs and
//                the sum converts to int32 exactly (int32 multiply-adds beyond). Weights
//                packed [C/c_bn][KH][KW][c_bn] in the sums' type.
//
// Workload: op "conv2d" with the shape parameters of conv2d (common.h), dtype u8 or i8, and
// requantize.h's parameters; inputs data NCHW, weight OIHW (int8 values), with epilogue
// "bias" an int32 bias [O], when requantizing an f32 scale [O]; output NCHW in dtype, or
// int32 with requantize=0 (ConvInteger).
#pragma once

#include <cstdint>

#include "schedules/op_template.h"

namespace kiln::schedules {

const OpTemplate& conv2d_int8_template();
const OpTemplate& conv2d_int8_dot_template();
const OpTemplate& conv2d_int8_depthwise_template();

// Integer convs with groups: depthwise (groups == C == O) only, on conv2d.int8.depthwise.
inline constexpr bool kInt8DepthwiseConv = true;

}  // namespace kiln::schedules
