#include "compiler/graph/rewrites/quant_params.h"

#include <cmath>

namespace kiln::graph {

std::optional<QuantOperand> quant_operand(const Graph& g, const Node& n) {
  if (!n.has_input(1) || !g.is_constant(n.inputs[1])) return std::nullopt;
  if (n.has_input(2) && !g.is_constant(n.inputs[2])) return std::nullopt;
  QuantOperand q;
  q.scale = n.inputs[1];
  q.zero = n.has_input(2) ? n.inputs[2] : "";
  q.scales = g.initializers.at(q.scale).to_f64();
  for (double s : q.scales)
    if (!(s > 0) || !std::isfinite(s)) return std::nullopt;
  q.type = DataType::u8();  // ONNX's default without a zero point
  if (n.has_input(2)) {
    q.zeros = g.initializers.at(q.zero).to_i64();
    q.type = g.initializers.at(q.zero).dtype();
  }
  return q;
}

std::optional<QuantOperand> activation_quant(const Graph& g, const Node& n) {
  std::optional<QuantOperand> q = quant_operand(g, n);
  if (!q || !q->per_tensor() || !(q->type == DataType::u8() || q->type == DataType::i8()))
    return std::nullopt;
  return q;
}

bool same_quantization(const QuantOperand& a, const QuantOperand& b) {
  return a.type == b.type && a.scales == b.scales && a.zero_value() == b.zero_value();
}

std::string zero_point_input(Graph& g, const QuantOperand& q, const std::string& base) {
  if (!q.zero.empty()) return q.zero;
  return g.add_constant(base + ".zero_point", HostTensor::from_i64(q.type, {}, {0}));
}

}  // namespace kiln::graph
