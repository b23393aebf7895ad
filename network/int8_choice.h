// Which quantized convolutions run on the int8 kernels, and which keep their float path
// because the int8 kernel would be the slower one on the target (the QDQ rewrite asks this,
// compiler/graph/rewrites/quantized_operators.h).
//
// kiln's int8 kernels multiply 16-bit channel pairs (schedules/intrinsics.h: pair_dot_i16).
// Without a dot-product instruction (x86 without AVX512-VNNI; AArch64, whose int8 tile widens
// and multiply-adds) that runs no faster than f32: measured on an AVX2 AMD EPYC with
// bench/mac_rate.c, a 12-accumulator register tile does 15.9 multiply-adds per ns in i16 pairs
// (17.2 in saturating u8 x s8) against 18-20 in f32 FMA. So where f32 has a kernel doing fewer
// multiplies, int8 loses:
//   - 3x3 stride-1 convs that the untuned f32 network runs by Winograd (2.25x to 4x fewer
//     multiplies; ResNet-18's 64-channel 56x56 layer: int8 6.8 ms, f32 Winograd 2.5 ms);
//   - convs of fewer than 4 input channels, which the channel pairs pad (an RGB image's first
//     layer: 3 channels computed as 4; ResNet-18's 7x7: int8 8.4 ms, f32 6.3 ms).
// A conv kept in float reads the dequantized activation and its weights folded to f32, and its
// result is quantized as the model says: ONNX's own float semantics of the QDQ graph.
#pragma once

#include <string>

#include "compiler/graph/graph.h"
#include "compiler/target/target.h"

namespace kiln::network {

// Whether the target multiplies int8 faster than f32: a dot-product instruction the int8
// kernels use (today AVX512-VNNI's vpdpwssd).
bool has_fast_int8(const Target& t);

// Why the quantized Conv `conv` (a float Conv between DequantizeLinear and QuantizeLinear)
// should keep its float path on `t`, or "" when the int8 kernel is the better choice (and for
// the default Target, which names no machine).
std::string int8_conv_slower(graph::Graph& g, const graph::Node& conv, const Target& t);

}  // namespace kiln::network
