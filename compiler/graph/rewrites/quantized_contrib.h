// ONNX Runtime's com.microsoft quantized operators (graph/ops/quantized_contrib.h) as what
// they are defined to be: DequantizeLinear of each 8-bit operand, the float operator, and
// QuantizeLinear of its result, e.g.
//   QLinearSigmoid(x, sx, zx, sy, zy)  =>  QuantizeLinear(Sigmoid(DQ(x, sx, zx)), sy, zy)
//   QGemm(a, .., b, .., c_i32 [, sy, zy])  =>  [Q](Gemm(DQ(a), DQ(b), DQ(c, sa * sb)))
// so the passes after it treat a QOperator model as its QDQ twin (quantized_operators and
// quantized_elementwise fuse what has integer kernels again). A QLinearAdd of two operands of
// one shape with constant per-tensor parameters is left as it is: it has its own kernel.
#pragma once

#include <cstdint>

#include "compiler/graph/graph.h"

namespace kiln::graph {

// Returns the number of nodes expanded; a Concat is written in rounds of at most
// `max_concat_inputs` inputs.
int expand_quantized_contrib(Graph& g, int64_t max_concat_inputs);

}  // namespace kiln::graph
