// op_table mappers for pooling, normalisations (batch, layer, softmax) and reductions.
#include <algorithm>
#include <cmath>

#include "network/op_mapping.h"

namespace kiln::network::mapping {

MappedNode map_pool(Graph& g, const Node& n) {
  MappedNode m;
  Workload& w = m.workload;
  w.op = n.op_type == "MaxPool" ? "max_pool2d" : "avg_pool2d";
  set_nchw(w, rank4_input(g, n));
  auto [kh, kw] = hw_attr(g, n, "kernel_shape", 1);
  auto [sh, sw] = hw_attr(g, n, "strides", 1);
  auto [dh, dw] = hw_attr(g, n, "dilations", 1);
  node_check(dh == 1 && dw == 1) << "dilated pooling is not supported";
  node_check(!n.has_output(1)) << "the Indices output is not supported";
  node_check(n.attr_int("storage_order", 0) == 0) << "storage_order 1 is not supported";
  auto [ph, pw] = hw_pads(g, n);
  w.params["KH"] = kh, w.params["KW"] = kw, w.params["SH"] = sh, w.params["SW"] = sw;
  w.params["PH"] = ph, w.params["PW"] = pw;
  w.params["ceil_mode"] = n.attr_int("ceil_mode", 0);
  if (n.op_type == "AveragePool")
    w.params["count_include_pad"] = n.attr_int("count_include_pad", 0);
  // A max pool of 8-bit data (quantized_elementwise.h) runs in that type; its windows are exact.
  const graph::DataType t = g.type_of(n.inputs[0])->dtype;
  if (t == graph::DataType::u8() || t == graph::DataType::i8()) {
    node_check(n.op_type == "MaxPool") << "AveragePool of " << t.str() << " data is not supported";
    w.dtype = t;
  }
  m.operands = {{"X", n.inputs[0]}};
  return m;
}

MappedNode map_global_avg_pool(Graph& g, const Node& n) {
  MappedNode m;
  m.workload.op = "global_avg_pool2d";
  set_nchw(m.workload, rank4_input(g, n));
  m.operands = {{"X", n.inputs[0]}};
  return m;
}

MappedNode map_batch_norm(Graph& g, const Node& n) {
  MappedNode m;
  m.workload.op = "batch_norm";
  set_nchw(m.workload, rank4_input(g, n));
  m.workload.params["eps"] = epsilon(g, n);
  // Batch statistics of a computed input: what a training graph normalises by.
  bool statistics_out = false;
  for (size_t i = 1; i < n.outputs.size(); ++i) statistics_out |= n.has_output(i);
  node_check(n.attr_int("training_mode", 0) == 0 && !statistics_out)
      << "BatchNormalization in training mode (over the batch's own statistics) is supported "
         "only where its input is a constant (weight standardisation), not on activations";
  m.operands = {{"X", n.inputs[0]},
                {"gamma", n.inputs[1]},
                {"beta", n.inputs[2]},
                {"mean", n.inputs[3]},
                {"var", n.inputs[4]}};
  return m;
}

// batch_norms_to_scale_shifts's ScaleShift (x, scale, shift): the elementwise chain
// x * scale + shift, then its fused activation; scale and shift [C, 1, ...] broadcast along
// axis 1 as map_elementwise pads them.
MappedNode map_scale_shift(Graph& g, const Node& n) {
  Node product = n;
  product.inputs.resize(2);
  MappedNode m = map_elementwise(g, product, "mul");
  std::vector<int64_t> shift = dims_of(g, n.inputs[2]);
  shift.insert(shift.begin(), m.workload.param("rank") - shift.size(), 1);
  for (size_t i = 0; i < shift.size(); ++i) m.workload.params["c" + std::to_string(i)] = shift[i];
  m.operands["c"] = n.inputs[2];
  m.workload.epilogue.push_back("add");
  add_epilogue(n, m);
  return m;
}

// Softmax over the last axis as [M, N] rows.
MappedNode map_softmax(Graph& g, const Node& n) {
  std::vector<int64_t> x = dims_of(g, n.inputs[0]);
  const int64_t rank = static_cast<int64_t>(x.size());
  int64_t axis = n.attr_int("axis", g.opset >= 13 ? -1 : 1);
  if (axis < 0) axis += rank;
  node_check(rank >= 1 && axis == rank - 1) << "softmax over axis " << axis << " of a rank-" << rank
                                            << " tensor is not supported (only the last axis)";
  MappedNode m;
  m.workload.op = "softmax";
  m.workload.params["N"] = x.back();
  m.workload.params["M"] = numel(x) / x.back();
  m.operands = {{"X", n.inputs[0]}};
  return m;
}

// LayerNormalization over the axes from `axis` on, as [rows, columns].
MappedNode map_layer_norm(Graph& g, const Node& n) {
  std::vector<int64_t> x = dims_of(g, n.inputs[0]);
  const int64_t rank = static_cast<int64_t>(x.size());
  const int64_t axis = normalized_axis(g, n, n.attr_int("axis", -1), rank);
  node_check(!n.has_output(1) && !n.has_output(2))
      << "the Mean and InvStdDev outputs are not supported";
  int64_t cols = 1;
  for (int64_t i = axis; i < rank; ++i) cols *= x[i];
  node_check(numel(dims_of(g, n.inputs[1])) == cols)
      << "Scale must have the " << cols << " elements of the normalised axes";
  std::string bias = n.has_input(2) ? n.inputs[2] : "";
  if (bias.empty())
    bias = g.add_constant(
        n.outputs[0] + ".zero_bias",
        HostTensor::from_f64(graph::DataType::f32(), {cols}, std::vector<double>(cols, 0.0)));
  node_check(numel(dims_of(g, bias)) == cols)
      << "B must have the " << cols << " elements of the normalised axes";
  MappedNode m;
  m.workload.op = "layer_norm";
  m.workload.params["M"] = numel(x) / cols, m.workload.params["N"] = cols;
  m.workload.params["eps"] = epsilon(g, n);
  m.operands = {{"X", n.inputs[0]}, {"gamma", n.inputs[1]}, {"beta", bias}};
  return m;
}

// ReduceSum / ReduceMean / ReduceMax over axes that are neighbours once extent-1 axes are
// ignored, as [outer, reduced, inner]; GlobalMaxPool is a max over H, W.
MappedNode map_reduce(Graph& g, const Node& n, const std::string& op) {
  std::vector<int64_t> x = dims_of(g, n.inputs[0]);
  const int64_t rank = static_cast<int64_t>(x.size());
  std::vector<bool> reduced(rank, false);
  if (n.op_type == "GlobalMaxPool") {
    for (int64_t i = 2; i < rank; ++i) reduced[i] = true;
  } else if (n.has_input(1) && g.initializers.count(n.inputs[1]) &&
             g.initializers.at(n.inputs[1]).numel() > 0) {
    for (int64_t a : constant_ints(g, n, 1, "axes")) reduced[normalized_axis(g, n, a, rank)] = true;
  } else {
    node_check(!n.has_input(1) || g.is_constant(n.inputs[1])) << "axes must be a constant";
    // No axes: every axis, unless noop_with_empty_axes says none.
    if (n.attr_int("noop_with_empty_axes", 0) == 0) reduced.assign(rank, true);
  }
  int64_t first = rank, last = -1;
  for (int64_t i = 0; i < rank; ++i)
    if (reduced[i] && x[i] > 1) first = std::min(first, i), last = i;
  int64_t outer = 1, count = 1, inner = 1;
  for (int64_t i = 0; i < rank; ++i) {
    if (i < first)
      outer *= x[i];
    else if (i > last)
      inner *= x[i];
    else {
      node_check(reduced[i] || x[i] == 1) << "reducing axes that are not neighbours (axis " << i
                                          << " lies between) is not supported";
      count *= x[i];
    }
  }
  MappedNode m;
  m.workload.op = op;
  m.workload.params["outer"] = outer, m.workload.params["reduced"] = count;
  m.workload.params["inner"] = inner;
  m.operands = {{"X", n.inputs[0]}};
  return m;
}

namespace {

// The workload shape of a tensor flattened around `axis`: [outer, axis extent, inner].
void set_around_axis(Workload& w, const std::vector<int64_t>& x, int64_t axis) {
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < axis; ++i) outer *= x[static_cast<size_t>(i)];
  for (size_t i = static_cast<size_t>(axis) + 1; i < x.size(); ++i) inner *= x[i];
  w.params["outer"] = outer, w.params["reduced"] = x[static_cast<size_t>(axis)];
  w.params["inner"] = inner;
}

}  // namespace

MappedNode map_arg_reduce(Graph& g, const Node& n, const std::string& op) {
  std::vector<int64_t> x = dims_of(g, n.inputs[0]);
  const int64_t rank = static_cast<int64_t>(x.size());
  node_check(rank >= 1) << "a scalar input has no axis to search";
  MappedNode m;
  m.workload.op = op;
  // keepdims only changes the output's shape, not its row-major memory.
  set_around_axis(m.workload, x, normalized_axis(g, n, n.attr_int("axis", 0), rank));
  m.workload.params["select_last"] = n.attr_int("select_last_index", 0) != 0 ? 1 : 0;
  m.operands = {{"X", n.inputs[0]}};
  return m;
}

MappedNode map_cumsum(Graph& g, const Node& n) {
  std::vector<int64_t> x = dims_of(g, n.inputs[0]);
  const int64_t rank = static_cast<int64_t>(x.size());
  std::vector<int64_t> axis = constant_ints(g, n, 1, "axis");
  node_check(axis.size() == 1) << "axis must hold one value, got " << axis.size();
  MappedNode m;
  m.workload.op = "cumsum";
  set_around_axis(m.workload, x, normalized_axis(g, n, axis[0], rank));
  m.workload.params["exclusive"] = n.attr_int("exclusive", 0) != 0 ? 1 : 0;
  m.workload.params["reverse"] = n.attr_int("reverse", 0) != 0 ? 1 : 0;
  m.operands = {{"X", n.inputs[0]}};
  return m;
}

}  // namespace kiln::network::mapping
