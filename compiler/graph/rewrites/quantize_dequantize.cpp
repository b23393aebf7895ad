#include "compiler/graph/rewrites/quantize_dequantize.h"

#include <map>
#include <optional>

#include "compiler/graph/ops/quantize.h"
#include "compiler/graph/rewrites/graph_match.h"
#include "compiler/graph/rewrites/graph_uses.h"
#include "compiler/graph/rewrites/node_emitter.h"

namespace kiln::graph {

namespace {

// One constant scale and zero point, and the zero point's type's range.
struct Quantization {
  double scale = 0;
  double zero = 0;
  double lo = 0, hi = 0;
  bool operator==(const Quantization& o) const {
    return scale == o.scale && zero == o.zero && lo == o.lo && hi == o.hi;
  }
};

// The per-tensor quantization of node `n` (scale input 1, zero point input 2), or nothing when
// it is per-axis or not constant.
std::optional<Quantization> per_tensor(const Graph& g, const Node& n) {
  if (!n.has_input(1) || !g.is_constant(n.inputs[1])) return std::nullopt;
  const std::vector<double> scale = g.initializers.at(n.inputs[1]).to_f64();
  if (scale.size() != 1) return std::nullopt;
  Quantization q;
  q.scale = scale[0];
  DataType type = DataType::u8();
  if (n.has_input(2)) {
    if (!g.is_constant(n.inputs[2])) return std::nullopt;
    const HostTensor& z = g.initializers.at(n.inputs[2]);
    if (z.to_i64().size() != 1) return std::nullopt;
    q.zero = static_cast<double>(z.to_i64()[0]);
    type = z.dtype();
  }
  // 8-bit pairs have kernels (quantize.flat, dequantize.flat); a 16-bit range is as exact
  // in f32 as an 8-bit one; float8 types have none.
  const std::optional<QuantRange> range = quantized_range(type);
  if (!range || type.bits == 8) return std::nullopt;
  q.lo = static_cast<double>(range->lo);
  q.hi = static_cast<double>(range->hi);
  return q;
}

}  // namespace

int decompose_quantize_dequantize(Graph& g) {
  // The sites first, by the Dequantize's output: replace_nodes moves the nodes it has passed,
  // so the Quantize a Dequantize reads cannot be looked up while it runs.
  struct Site {
    std::string x;
    Quantization q;
  };
  std::map<std::string, Site> sites;
  for (const Node& n : g.nodes) {
    if (n.op_type != "DequantizeLinear") continue;
    const Node* quantize = producer_node(g, n.inputs[0]);
    if (!quantize || quantize->op_type != "QuantizeLinear") continue;
    const std::optional<Quantization> q = per_tensor(g, *quantize), dq = per_tensor(g, n);
    if (!q || !dq || !(*q == *dq)) continue;
    const auto x_type = g.type_of(quantize->inputs[0]);
    if (!x_type || x_type->dtype != DataType::f32()) continue;
    sites[n.outputs[0]] = {quantize->inputs[0], *q};
  }
  if (sites.empty()) return 0;
  return replace_nodes(g, [&](Node& n, std::vector<Node>& out) {
    auto it = n.op_type == "DequantizeLinear" ? sites.find(n.outputs[0]) : sites.end();
    if (it == sites.end()) return false;
    const Quantization& q = it->second.q;
    NodeEmitter e(g, n, out, 0);
    const std::string scale = e.scalar(q.scale), zero = e.scalar(q.zero);
    std::string v = e.emit("Div", {it->second.x, scale});
    v = e.emit("Round", {v});
    v = e.emit("Add", {v, zero});
    v = e.emit("Clip", {v, e.scalar(q.lo), e.scalar(q.hi)});
    v = e.emit("Sub", {v, zero});
    e.emit("Mul", {v, scale}, {}, n.outputs[0]);
    return true;
  });
}

}  // namespace kiln::graph
