// Patterns of a QDQ model that stay in 8 bits with no float step between the integer layers
// (run after quantized_operators, whose QLinearConvs write the 8-bit values read here):
//   DQ(x; s, z) -> op -> Q(s, z)                               =>  op(x)
//     for an op that selects values (MaxPool, and the copies Flatten, Reshape, Squeeze,
//     Unsqueeze): it commutes with the increasing DequantizeLinear, and
//     Q(DQ(v)) = v for the same scale and zero point, so the 8-bit result is the same values;
//   DQ(a; sa, za), DQ(b; sb, zb) -> Add [-> Relu] -> Q(sy, zy)  =>  QLinearAdd(a, .., b, .., sy,
//   zy)
//     ONNX Runtime's operator, as its QDQ transformer makes it (a Relu only where zy is the
//     type's least value: the saturation is the Relu). It rounds as ONNX Runtime's kernel does
//     (graph/ops/quantized_contrib.h), not as the three f32 steps: one sum in a few thousand
//     lands a quantum away from those, and on ONNX Runtime's own value. kiln then computes a
//     QDQ model as ONNX Runtime does by default, to the bit on the models measured.
// Only per-tensor quantization of one 8-bit type throughout, a MaxPool without its Indices
// output, and an Add of two operands of one shape (the kernel is flat) are rewritten; the rest
// keeps its float path.
#pragma once

#include "compiler/graph/graph.h"

namespace kiln::graph {

// Returns the number of operators rewritten.
int fuse_quantized_elementwise(Graph& g);

}  // namespace kiln::graph
