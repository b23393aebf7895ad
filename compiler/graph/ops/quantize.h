// The integer types a quantized tensor may have, shared by the quantization operators'
// reference (quantize.cpp) and the rewrite that writes a Quantize-Dequantize pair in float
// steps (compiler/graph/rewrites/quantize_dequantize.h).
#pragma once

#include <cstdint>
#include <optional>

#include "compiler/graph/graph.h"

namespace kiln::graph {

struct QuantRange {
  int64_t lo, hi;
};

// The range of uint8, int8, uint16 and int16; nothing for any other type.
std::optional<QuantRange> quantized_range(DataType t);

}  // namespace kiln::graph
