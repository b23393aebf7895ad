#include "compiler/graph/rewrites/quantized_elementwise.h"

#include <optional>
#include <set>

#include "compiler/graph/rewrites/graph_match.h"
#include "compiler/graph/rewrites/quant_params.h"

namespace kiln::graph {

namespace {

// The Q that quantizes `value` (through a Relu when `relu_ok` and there is one), or nullptr.
const Node* quantize_after(const Graph& g, const std::string& value, bool relu_ok,
                           const Node** relu) {
  *relu = nullptr;
  const Node* next = only_reader(g, value);
  if (relu_ok && next && next->op_type == "Relu" && next->epilogue.empty()) {
    *relu = next;
    next = only_reader(g, next->outputs[0]);
  }
  return next && next->op_type == "QuantizeLinear" ? next : nullptr;
}

// The dimensions of `value` when they are known.
std::optional<std::vector<int64_t>> dims_of(const Graph& g, const std::string& value) {
  const auto t = g.type_of(value);
  if (!t || !t->is_concrete()) return std::nullopt;
  return t->dims();
}

// Removes `dq`'s output with the pattern when the pattern's `op` was its only reader.
void take_if_only_reader(const Graph& g, const Node& dq, std::set<std::string>& interior) {
  if (only_reader(g, dq.outputs[0])) interior.insert(dq.outputs[0]);
}

// The operators whose result on dequantized values quantizes back to the same values when the
// quantization is the same: a max and copies select values and never compute new ones.
bool selects_values(const Node& n) {
  static const std::set<std::string> k = {"MaxPool", "Flatten", "Reshape", "Squeeze", "Unsqueeze"};
  return k.count(n.op_type) > 0;
}

// DQ -> op -> Q of the same quantization, op a selection: the op on the 8-bit input.
std::optional<Node> selection_site(const Graph& g, const Node& op, const Node** q,
                                   std::set<std::string>& interior) {
  if (op.outputs.size() != 1 || !op.epilogue.empty() || op.inputs.empty()) return std::nullopt;
  const Node* dq = producer_op(g, op.inputs[0], "DequantizeLinear");
  const Node* relu = nullptr;
  *q = quantize_after(g, op.outputs[0], false, &relu);
  if (!dq || !*q) return std::nullopt;
  const std::optional<QuantOperand> in = activation_quant(g, *dq), out = activation_quant(g, **q);
  if (!in || !out || !same_quantization(*in, *out)) return std::nullopt;
  Node fused = op;
  fused.inputs[0] = dq->inputs[0];
  interior.insert(op.outputs[0]);
  take_if_only_reader(g, *dq, interior);
  return fused;
}

// DQ(a), DQ(b) -> Add [-> Relu] -> Q of one 8-bit type, a and b of one shape: QLinearAdd.
std::optional<Node> add_site(Graph& g, const Node& add, const Node** q,
                             std::set<std::string>& interior) {
  if (add.inputs.size() != 2 || !add.epilogue.empty()) return std::nullopt;
  const Node* da = producer_op(g, add.inputs[0], "DequantizeLinear");
  const Node* db = producer_op(g, add.inputs[1], "DequantizeLinear");
  const Node* relu = nullptr;
  *q = quantize_after(g, add.outputs[0], true, &relu);
  if (!da || !db || !*q) return std::nullopt;
  const std::optional<QuantOperand> pa = activation_quant(g, *da), pb = activation_quant(g, *db),
                                    py = activation_quant(g, **q);
  if (!pa || !pb || !py || pa->type != py->type || pb->type != py->type) return std::nullopt;
  const int64_t type_min = py->type == DataType::u8() ? 0 : -128;
  if (relu && py->zero_value() != type_min) return std::nullopt;
  const auto a = dims_of(g, da->inputs[0]), b = dims_of(g, db->inputs[0]);
  if (!a || !b || *a != *b) return std::nullopt;
  Node fused;
  fused.op_type = "QLinearAdd";
  const std::string& base = add.outputs[0];
  fused.inputs = {da->inputs[0],
                  pa->scale,
                  zero_point_input(g, *pa, base + ".a"),
                  db->inputs[0],
                  pb->scale,
                  zero_point_input(g, *pb, base + ".b"),
                  py->scale,
                  zero_point_input(g, *py, base + ".y")};
  interior.insert(add.outputs[0]);
  if (relu) interior.insert(relu->outputs[0]);
  take_if_only_reader(g, *da, interior);
  if (db != da) take_if_only_reader(g, *db, interior);
  return fused;
}

std::optional<Node> site(Graph& g, const Node& n, const Node** q, std::set<std::string>& interior) {
  if (selects_values(n)) return selection_site(g, n, q, interior);
  if (n.op_type == "Add") return add_site(g, n, q, interior);
  return std::nullopt;
}

}  // namespace

int fuse_quantized_elementwise(Graph& g) {
  // The operators first, by output (replace_pattern moves nodes, so each is found again).
  std::vector<std::string> ops;
  for (const Node& n : g.nodes)
    if ((selects_values(n) || n.op_type == "Add") && !n.outputs.empty())
      ops.push_back(n.outputs[0]);
  int fused = 0;
  for (const std::string& out : ops) {
    const Node* op = producer_node(g, out);
    if (!op) continue;
    const Node* q = nullptr;
    std::set<std::string> interior;
    std::optional<Node> node = site(g, *op, &q, interior);
    if (!node) continue;
    const std::string q_out = q->outputs[0];
    replace_pattern(g, q_out, std::move(*node), interior);
    ++fused;
  }
  return fused;
}

}  // namespace kiln::graph
