#include "compiler/graph/rewrites/quantized_contrib.h"

#include <map>

#include "compiler/graph/ops/quantized_contrib.h"
#include "compiler/graph/rewrites/graph_uses.h"
#include "compiler/graph/rewrites/node_emitter.h"

namespace kiln::graph {

namespace {

bool one_constant(const Graph& g, const Node& n, size_t i) {
  return !n.has_input(i) ||
         (g.is_constant(n.inputs[i]) && g.initializers.at(n.inputs[i]).numel() == 1);
}

bool is_8bit(const std::optional<ValueType>& t) {
  return t && (t->dtype == DataType::u8() || t->dtype == DataType::i8());
}

// A QLinearAdd that qlinear_add.flat runs as it is: operands of one shape, constant
// per-tensor scales and zero points.
bool qlinear_add_has_kernel(const Graph& g, const Node& n) {
  for (size_t i : {1, 2, 4, 5, 6, 7})
    if (!one_constant(g, n, i)) return false;
  const auto a = g.type_of(n.inputs[0]), b = g.type_of(n.inputs[3]);
  return a && b && a->is_concrete() && b->is_concrete() && a->dims() == b->dims();
}

// A QGemm that the int8 dense kernels run as it is: a 2-D 8-bit A quantized per tensor,
// constant int8 weights with zero points 0 (per tensor or per output column), an int32 C, and
// an 8-bit output of A's type.
bool qgemm_has_kernel(const Graph& g, const Node& n) {
  if (!n.has_input(7) || n.attr_int("transA", 0) != 0) return false;
  for (size_t i : {1, 2, 7, 8})
    if (!one_constant(g, n, i)) return false;
  const auto a = g.type_of(n.inputs[0]);
  if (!is_8bit(a) || !a->is_concrete() || a->dims().size() != 2) return false;
  if (n.has_input(8) && g.initializers.at(n.inputs[8]).dtype() != a->dtype) return false;
  for (size_t i : {3, 4, 5, 6})
    if (n.has_input(i) && !g.is_constant(n.inputs[i])) return false;
  if (g.initializers.at(n.inputs[3]).dtype() != DataType::i8()) return false;
  if (n.has_input(5))
    for (int64_t z : g.initializers.at(n.inputs[5]).to_i64())
      if (z != 0) return false;
  return !n.has_input(6) || g.initializers.at(n.inputs[6]).dtype() == DataType::i32();
}

bool has_kernel(const Graph& g, const Node& n) {
  if (n.op_type == "QLinearAdd") return qlinear_add_has_kernel(g, n);
  if (n.op_type == "QGemm") return qgemm_has_kernel(g, n);
  return false;
}

// The number of values of `scale` (a per-axis scale has more than one).
int64_t count_of(const Graph& g, const std::string& scale) {
  if (g.is_constant(scale)) return g.initializers.at(scale).numel();
  const auto t = g.type_of(scale);
  return t && t->is_concrete() && !t->dims().empty() ? t->dims()[0] : 1;
}

}  // namespace

int expand_quantized_contrib(Graph& g, int64_t max_concat_inputs) {
  return replace_nodes(g, [&](Node& n, std::vector<Node>& out) {
    if (!is_quantized_contrib_op(n.op_type) || has_kernel(g, n)) return false;
    const QuantizedContribParts parts = quantized_contrib_parts(n);
    NodeEmitter e(g, n, out, max_concat_inputs);
    std::vector<std::string> inputs;
    for (const QuantizedContribParts::Operand& o : parts.operands) {
      std::vector<std::string> dq = {n.inputs.at(o.value), n.inputs.at(o.scale)};
      if (n.has_input(o.zero)) dq.push_back(n.inputs[o.zero]);
      std::map<std::string, AttrValue> attrs;
      if (count_of(g, dq[1]) > 1) attrs["axis"] = o.axis;
      inputs.push_back(e.emit("DequantizeLinear", dq, attrs));
    }
    if (parts.int32_bias && n.has_input(*parts.int32_bias)) {
      // QGemm's C is in units of a_scale * b_scale (per column where b's scale is).
      const std::string& b_scale = n.inputs[parts.operands[1].scale];
      const std::string scale = e.emit("Mul", {n.inputs[parts.operands[0].scale], b_scale});
      std::map<std::string, AttrValue> attrs;
      if (count_of(g, b_scale) > 1) attrs["axis"] = int64_t{0};
      inputs.push_back(e.emit("DequantizeLinear", {n.inputs[*parts.int32_bias], scale}, attrs));
    }
    std::map<std::string, AttrValue> attrs;
    for (const std::string& a : parts.float_attrs)
      if (n.has_attr(a)) attrs[a] = n.attrs.at(a);
    if (parts.float_op == "Gemm") attrs["beta"] = 1.0f;
    if (!parts.y) {
      e.emit(parts.float_op, inputs, attrs, n.outputs.at(0));
      return true;
    }
    const std::string y = parts.float_op == "Concat" ? e.concat(inputs, n.attr_int("axis", 0))
                                                     : e.emit(parts.float_op, inputs, attrs);
    std::vector<std::string> q = {y, n.inputs.at((*parts.y)[0])};
    if (n.has_input((*parts.y)[1])) q.push_back(n.inputs[(*parts.y)[1]]);
    e.emit("QuantizeLinear", q, {}, n.outputs.at(0));
    return true;
  });
}

}  // namespace kiln::graph
