// The integer types a quantized tensor may have, shared by the quantization operators'
// reference (quantize.cpp), constant folding and the rewrites of quantized patterns
// (compiler/graph/rewrites/quantize_dequantize.h, quantized_operators.h).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "compiler/graph/graph.h"

namespace kiln::graph {

struct QuantRange {
  int64_t lo, hi;
};

// The range of uint8, int8, uint16 and int16; nothing for any other type.
std::optional<QuantRange> quantized_range(DataType t);

// Whether `n` dequantizes 8-bit constant weights: a DequantizeLinear whose inputs are all
// constants and whose data is int8 or uint8. Constant folding leaves these to the rewrite
// that makes int8 operators of them (compiler/graph/rewrites/quantized_operators.h).
bool is_quantized_weight(const Graph& g, const Node& n);

// ONNX Runtime's QGemm with an output scale (y = requantize(Σ (a - a_zero)(b - b_zero) + C)),
// exactly as QLinearMatMul requantizes: the reference of the int8 dense kernel it runs on. The
// node's inputs A, a_scale, a_zero, B, b_scale, b_zero, C (int32, optional), y_scale, y_zero.
class EvalContext;
std::vector<HostTensor> eval_qgemm(const EvalContext& ctx);

}  // namespace kiln::graph
