// Which quantized convolutions run on the int8 kernels, and which keep their float path
// because the int8 kernel would be the slower one on the target (the QDQ rewrite asks this,
// compiler/graph/rewrites/quantized_operators.h).
//
// Where the target has a byte dot instruction (AVX512-VNNI or AVX-VNNI `vpdpbusd`, AArch64
// dotprod `sdot`), the int8 kernels multiply channel quads (conv2d.int8.dot: four
// multiply-adds per 32-bit lane, four times f32's FMA) and every quantized conv stays int8.
// Without one, they multiply 16-bit channel pairs (schedules/intrinsics.h: pair_dot_i16),
// which runs no faster than f32: measured on an AVX2 AMD EPYC with
// bench/mac_rate.c, a 12-accumulator register tile does 15.9 multiply-adds per ns in i16 pairs
// (17.2 in saturating u8 x s8) against 18-20 in f32 FMA. So where f32 has a kernel doing fewer
// multiplies, int8 loses:
//   - 3x3 stride-1 convs that the untuned f32 network runs by Winograd (2.25x to 4x fewer
//     multiplies; ResNet-18's 64-channel 56x56 layer: int8 6.8 ms, f32 Winograd 2.5 ms);
//   - convs of fewer than 4 input channels, which the channel pairs pad (an RGB image's first
//     layer: 3 channels computed as 4; ResNet-18's 7x7: int8 8.4 ms, f32 6.3 ms).
// A QLinearConv with uint8 weights keeps its float path on every target: the int8 kernels take
// int8 weights only.
// A conv kept in float reads the dequantized activation and its weights folded to f32, and its
// result is quantized as the model says: ONNX's own float semantics of the QDQ graph.
#pragma once

#include <map>
#include <string>

#include "compiler/graph/graph.h"
#include "compiler/target/target.h"

namespace kiln::network {

// Whether the target multiplies int8 faster than f32: a byte dot instruction the int8
// kernels use (schedules::quad_dot_lanes).
bool has_fast_int8(const Target& t);

// Why the quantized Conv `conv` (a float Conv between DequantizeLinear and QuantizeLinear)
// should keep its float path on `t`, or "" when the int8 kernel is the better choice (and for
// the default Target, which names no machine).
std::string int8_conv_keeps_float(graph::Graph& g, const graph::Node& conv, const Target& t);

// How prepare_graph settles each quantized conv's path, beyond the rule above.
//  - `force`: every conv that has an int8 kernel on one path. `kiln tune --precisions int8,f32`
//    extracts the kernels of both networks (Both), and int8_paths.h lowers each (Int8, Float)
//    to time both paths of every conv from the records.
//  - `measured`: int8_paths.h's answers from the records, by conv (int8_conv_key): why it keeps
//    its float path, or "" for its int8 kernel. They win over the rule; a conv without one
//    takes the rule.
struct Int8Paths {
  enum class Force { None, Int8, Float, Both };
  Force force = Force::None;
  std::map<std::string, std::string> measured;
};

// The reason Force::Float gives (int8_paths.h picks the convs out of the kept ones by it).
inline constexpr const char* kForcedFloatPath = "the float path, forced to be measured";

// How the reports and Int8Paths::measured name a quantized conv: its node's name, else its
// output's.
std::string int8_conv_key(const graph::Node& conv);

// Why `conv` keeps its float path under `paths`, or "" for its int8 kernel: what the int8
// kernels cannot take first (uint8 weights), then `paths`, then int8_conv_keeps_float.
std::string int8_path_reason(graph::Graph& g, const graph::Node& conv, const Target& t,
                             const Int8Paths& paths);

}  // namespace kiln::network
