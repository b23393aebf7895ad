// Patterns of a QDQ model that stay in 8 bits with no float step between the integer layers
// (run after quantized_operators, whose QLinearConvs write the 8-bit values read here):
//   DQ(x; s, z) -> op -> Q(s, z)                               =>  op(x)
//     for an op that selects values (MaxPool, and the copies Flatten, Reshape, Squeeze,
//     Unsqueeze): it commutes with the increasing DequantizeLinear, and
//     Q(DQ(v)) = v for the same scale and zero point, so the 8-bit result is the same values;
//   DQ(a; sa, za), DQ(b; sb, zb) -> Add [-> Relu] -> Q(sy, zy)  =>  QLinearAdd(a, .., b, .., sy,
//   zy)
//     ONNX Runtime's operator with rounding="qdq": computed as the three steps are in f32,
//     so again the same values (a Relu only where zy is the type's least value: the
//     saturation is the Relu).
// Only per-tensor quantization of one 8-bit type throughout, a MaxPool without its Indices
// output, and an Add of two operands of one shape (the kernel is flat) are rewritten; the rest
// keeps its float path.
#pragma once

#include "compiler/graph/graph.h"

namespace kiln::graph {

// Returns the number of operators rewritten.
int fuse_quantized_elementwise(Graph& g);

}  // namespace kiln::graph
