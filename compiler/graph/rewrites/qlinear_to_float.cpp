#include "compiler/graph/rewrites/qlinear_to_float.h"

#include <vector>

namespace kiln::graph {

namespace {

// A DequantizeLinear of `value` into a fresh f32 value of `dims`, along `axis` when the scale
// is a vector.
Node dequantize(Graph& g, const std::string& value, const std::string& scale,
                const std::string& zero, const std::vector<int64_t>& dims, int64_t axis) {
  Node dq;
  dq.op_type = "DequantizeLinear";
  dq.inputs = {value, scale};
  if (!zero.empty()) dq.inputs.push_back(zero);
  dq.outputs = {g.unique_name(value + ".dequantized")};
  if (g.initializers.at(scale).numel() > 1) dq.attrs["axis"] = axis;
  g.types[dq.outputs[0]] = ValueType::of(DataType::f32(), dims);
  return dq;
}

bool constants(const Graph& g, const Node& n, std::initializer_list<size_t> inputs) {
  for (size_t i : inputs)
    if (n.has_input(i) && !g.is_constant(n.inputs[i])) return false;
  return true;
}

}  // namespace

std::set<std::string> expand_float_qlinear_convs(Graph& g, const KeepFloat& keep_float) {
  std::set<std::string> made;
  if (!keep_float) return made;
  std::vector<Node> out;
  for (Node& n : g.nodes) {
    const bool candidate = n.op_type == "QLinearConv" && n.inputs.size() >= 8 &&
                           constants(g, n, {1, 2, 3, 4, 5, 6, 7, 8}) && g.type_of(n.inputs[0]) &&
                           g.type_of(n.inputs[0])->is_concrete() && g.type_of(n.outputs[0]) &&
                           g.type_of(n.outputs[0])->is_concrete();
    // Asked of the Conv this node stands for: same attributes, the 8-bit data and weights
    // (their shapes are what the answer depends on).
    Node conv;
    conv.name = n.name;
    conv.op_type = "Conv";
    conv.attrs = n.attrs;
    conv.outputs = n.outputs;  // named after the node's result in reports
    if (candidate) conv.inputs = {n.inputs[0], n.inputs[3]};
    if (!candidate || keep_float(g, conv).empty()) {
      out.push_back(std::move(n));
      continue;
    }
    const std::vector<int64_t> x = g.type_of(n.inputs[0])->dims();
    const std::vector<int64_t> w = g.initializers.at(n.inputs[3]).shape();
    const std::vector<int64_t> y = g.type_of(n.outputs[0])->dims();
    Node dq_x = dequantize(g, n.inputs[0], n.inputs[1], n.inputs[2], x, 1);
    Node dq_w = dequantize(g, n.inputs[3], n.inputs[4], n.inputs[5], w, 0);
    conv.inputs = {dq_x.outputs[0], dq_w.outputs[0]};
    out.push_back(std::move(dq_x));
    out.push_back(std::move(dq_w));
    if (n.has_input(8)) {
      // The int32 bias is in units of sx * sw[o], as QLinearConv defines it: folded into an
      // f32 constant here (a DequantizeLinear of it would need another folding pass).
      const std::vector<double> sx = g.initializers.at(n.inputs[1]).to_f64();
      const std::vector<double> sw = g.initializers.at(n.inputs[4]).to_f64();
      std::vector<double> bias = g.initializers.at(n.inputs[8]).to_f64();
      for (size_t o = 0; o < bias.size(); ++o)
        bias[o] = double(
            static_cast<float>(bias[o]) *
            (static_cast<float>(sx.at(0)) * static_cast<float>(sw.at(sw.size() == 1 ? 0 : o))));
      conv.inputs.push_back(g.add_constant(n.inputs[8] + ".dequantized",
                                           HostTensor::from_f64(DataType::f32(), {w[0]}, bias)));
    }
    conv.outputs = {g.unique_name(n.outputs[0] + ".float")};
    g.types[conv.outputs[0]] = ValueType::of(DataType::f32(), y);
    made.insert(conv.outputs[0]);
    Node q;
    q.name = n.name.empty() ? "" : n.name + ".quantize";
    q.op_type = "QuantizeLinear";
    q.inputs = {conv.outputs[0], n.inputs[6], n.inputs[7]};
    q.outputs = {n.outputs[0]};
    out.push_back(std::move(conv));
    out.push_back(std::move(q));
  }
  g.nodes = std::move(out);
  return made;
}

}  // namespace kiln::graph
