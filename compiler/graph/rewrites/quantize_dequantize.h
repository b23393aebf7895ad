// A 16-bit quantized activation of a QDQ model: DequantizeLinear(QuantizeLinear(x, s, z), s, z)
// with one constant scale and zero point, written exactly in float operators kiln has kernels
// for (8-bit pairs run on the quantize.flat and dequantize.flat kernels instead):
//   Mul(Sub(Clip(Add(Round(Div(x, s)), z), qmin, qmax), z), s)
// Each step is exact in f32 or rounds once as ONNX does (x / s, (q - z) * s), Round is half
// to even, Clip is the saturation to the zero point's type: the float model computes the same
// bits as the quantized one at every quantized activation. Weights need nothing here: their
// DequantizeLinear of a constant folds to a float constant (quantized_operators.h).
#pragma once

#include "compiler/graph/graph.h"

namespace kiln::graph {

// Returns the number of pairs rewritten; the new values have no types until shape inference.
int decompose_quantize_dequantize(graph::Graph& g);

}  // namespace kiln::graph
