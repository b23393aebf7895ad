// Quantized operators from a QDQ model: where a float Conv or MatMul reads DequantizeLinear'd
// 8-bit values and int8 weights and its result goes straight into a QuantizeLinear, the
// three steps are one integer operator, as ONNX Runtime's QDQ transformer makes them:
//   DQ(x_q) -> Conv(., DQ(w_q) [, bias]) [-> Relu] -> Q  =>  QLinearConv(x_q, .., w_q, ..,
//   bias_i32) DQ(a_q) -> MatMul(., DQ(b_q)) [-> Relu] -> Q          =>  QLinearMatMul(a_q, .., b_q,
//   ..) DQ(a_q) -> Gemm(., DQ(b_q) [, bias]) [-> Relu] -> Q    =>  QGemm(a_q, .., b_q, ..,
//   bias_i32, ..)
//     (ONNX Runtime's operator: a classifier; alpha and beta 1, A not transposed)
// (a Relu only where the Q's zero point is its type's least value: the saturation is the Relu)
// so the activation stays in 8 bits between integer layers. Only what the int8 kernels take
// is rewritten (RewriteOptions): per-tensor data and output quantization of one 8-bit type,
// int8 weights with a zero zero point (per-tensor or per output channel), Conv with groups 1,
// a bias that is absent, int32 dequantized with the product of the scales, or an f32
// constant (then quantized with that scale, rounded half to even as ONNX Runtime's
// quantizer writes it), and no Conv the caller's KeepFloat keeps in float. Everything else
// keeps its float path (quantize_dequantize.h).
//
// Weight DequantizeLinears are kept unfolded by constant folding for this pass
// (graph/ops/quantize.h: is_quantized_weight); those it does not fuse are folded here, into
// f32 constants as before.
#pragma once

#include <functional>
#include <string>

#include "compiler/graph/graph.h"

namespace kiln::graph {

// Asked of each Conv the pass could rewrite (its types concrete): why it should keep its float
// path instead (the int8 kernel would be slower there), or "" to rewrite it. The network
// compiler answers for its target (network/int8_choice.h); empty: every site is rewritten.
using KeepFloat = std::function<std::string(Graph& g, const Node& conv)>;

// Returns the number of operators rewritten (folded weight dequantizations not counted). Convs
// of groups 1 are rewritten, depthwise ones (groups == C == O) too where `depthwise` is set.
int fuse_quantized_operators(Graph& g, bool depthwise, const KeepFloat& keep_float = {});

}  // namespace kiln::graph
