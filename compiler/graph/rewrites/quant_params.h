// The scale and zero point of a QuantizeLinear or DequantizeLinear node as the quantized
// rewrites read them: constants only (a computed scale keeps the float path), the quantized
// side's type, and the zero point made explicit where a fused operator needs one.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "compiler/graph/graph.h"

namespace kiln::graph {

struct QuantOperand {
  std::string scale, zero;     // the node's inputs 1 and 2 (zero "" when omitted)
  std::vector<double> scales;  // positive and finite
  std::vector<int64_t> zeros;  // empty: omitted (0)
  DataType type;               // the quantized side's type
  // Per tensor: one scale and at most one zero point.
  bool per_tensor() const { return scales.size() == 1 && zeros.size() <= 1; }
  int64_t zero_value() const { return zeros.empty() ? 0 : zeros[0]; }
};

// The constant scale and zero point of Q/DQ node `n`, or nothing when either is computed or a
// scale is not positive and finite (the float path then reports it).
std::optional<QuantOperand> quant_operand(const Graph& g, const Node& n);

// Per-tensor 8-bit quantization of an activation (one scale, one zero point), or nothing.
std::optional<QuantOperand> activation_quant(const Graph& g, const Node& n);

// Whether two activation quantizations are the same numbers in the same type (so that
// Q(DQ(v)) is v).
bool same_quantization(const QuantOperand& a, const QuantOperand& b);

// The zero point input of `q`, made explicit as a new constant named after `base` when the
// node omitted it (the fused operators require one).
std::string zero_point_input(Graph& g, const QuantOperand& q, const std::string& base);

}  // namespace kiln::graph
