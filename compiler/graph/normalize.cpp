#include "compiler/graph/normalize.h"

namespace kiln::graph {

namespace {

// Moves attribute `key` (ints) into input `index` as an i64 constant; "" when absent.
void ints_attr_to_input(Node& node, const std::string& key, size_t index, Graph& graph) {
  if (node.inputs.size() <= index) node.inputs.resize(index + 1);
  auto it = node.attrs.find(key);
  if (it == node.attrs.end()) return;
  const std::vector<int64_t> values = node.attr_ints(key);
  const std::string base = (node.outputs.empty() ? node.op_type : node.outputs[0]) + "_" + key;
  node.inputs[index] = graph.add_constant(base, HostTensor::i64_vector(values));
  node.attrs.erase(it);
}

// Moves a float attribute into input `index` as an f32 scalar; "" when absent.
void float_attr_to_input(Node& node, const std::string& key, size_t index, Graph& graph) {
  if (node.inputs.size() <= index) node.inputs.resize(index + 1);
  auto it = node.attrs.find(key);
  if (it == node.attrs.end()) return;
  const float value = node.attr_float(key, 0.0f);
  const std::string base = (node.outputs.empty() ? node.op_type : node.outputs[0]) + "_" + key;
  node.inputs[index] = graph.add_constant(base, HostTensor::from_f64(DataType::f32(), {}, {value}));
  node.attrs.erase(it);
}

// Drops trailing omitted inputs, so input counts stay what the operator allows.
void trim_inputs(Node& node) {
  while (!node.inputs.empty() && node.inputs.back().empty()) node.inputs.pop_back();
}

bool is_reduce(const std::string& op) {
  return op.rfind("Reduce", 0) == 0;
}

// Upsample (7-9) and Resize-10: inputs (X, scales) or attribute scales; asymmetric
// coordinates and floor rounding, which is what those versions compute.
void to_resize_11(Node& node, Graph& graph) {
  if (node.has_attr("scales")) {
    const std::vector<float> scales = node.attr_floats("scales");
    std::vector<double> values(scales.begin(), scales.end());
    const std::string base = (node.outputs.empty() ? node.op_type : node.outputs[0]) + "_scales";
    node.inputs.resize(1);
    node.inputs.push_back(graph.add_constant(
        base,
        HostTensor::from_f64(DataType::f32(), {static_cast<int64_t>(values.size())}, values)));
    node.attrs.erase("scales");
  }
  if (node.inputs.size() >= 2) node.inputs.insert(node.inputs.begin() + 1, "");  // no roi
  std::string mode = node.attr_string("mode", "nearest");
  user_check(mode == "nearest" || mode == "linear" || mode == "bilinear")
      << node.op_type << " mode '" << mode << "' is not one of nearest, linear";
  node.attrs["mode"] = std::string(mode == "bilinear" ? "linear" : mode);
  node.attrs["coordinate_transformation_mode"] = std::string("asymmetric");
  node.attrs["nearest_mode"] = std::string("floor");
  node.op_type = "Resize";
}

// Operators that had Caffe2-style broadcasting (a `broadcast` flag and an alignment `axis`)
// before opset 7.
bool has_legacy_broadcast(const std::string& op) {
  static const char* kOps[] = {"Add", "Sub", "Mul",   "Div",     "Pow",  "And",
                               "Or",  "Xor", "Equal", "Greater", "Less", "Gemm"};
  for (const char* o : kOps)
    if (op == o) return true;
  return false;
}

}  // namespace

void normalize_node(Node& node, int64_t opset, Graph& graph) {
  const std::string& op = node.op_type;
  // Before opset 6: a hint for in-place execution that does not change results.
  node.attrs.erase("consumed_inputs");
  if (opset < 7 && has_legacy_broadcast(op)) {
    // Without an axis, broadcast=1 aligns trailing dimensions as numpy does; with one, B
    // aligns at that axis of A, which would need A's rank here.
    user_check(!(node.attr_int("broadcast", 0) && node.has_attr("axis") && op != "Gemm"))
        << "broadcasting with an explicit axis (opset < 7) is not supported";
    node.attrs.erase("broadcast");
    node.attrs.erase("axis");
  }
  if (op == "Concat" && opset < 4 && !node.has_attr("axis")) node.attrs["axis"] = int64_t{1};
  if (op == "Slice" && opset < 10) {
    node.inputs.resize(1);
    ints_attr_to_input(node, "starts", 1, graph);
    ints_attr_to_input(node, "ends", 2, graph);
    ints_attr_to_input(node, "axes", 3, graph);
    user_check(!node.inputs[1].empty() && !node.inputs[2].empty())
        << "Slice needs the starts and ends attributes";
  } else if (op == "Reshape" && opset < 5) {
    node.inputs.resize(1);
    ints_attr_to_input(node, "shape", 1, graph);
  } else if ((op == "Squeeze" || op == "Unsqueeze") && opset < 13) {
    node.inputs.resize(1);
    ints_attr_to_input(node, "axes", 1, graph);
  } else if (is_reduce(op) && node.has_attr("axes")) {
    node.inputs.resize(1);
    ints_attr_to_input(node, "axes", 1, graph);
  } else if (op == "Clip" && opset < 11) {
    node.inputs.resize(1);
    float_attr_to_input(node, "min", 1, graph);
    float_attr_to_input(node, "max", 2, graph);
  } else if (op == "Pad" && opset < 11) {
    if (node.has_attr("paddings")) {  // the opset-1 name
      node.attrs["pads"] = node.attrs["paddings"];
      node.attrs.erase("paddings");
    }
    node.inputs.resize(1);
    ints_attr_to_input(node, "pads", 1, graph);
    float_attr_to_input(node, "value", 2, graph);
    user_check(!node.inputs[1].empty()) << "Pad needs the pads attribute";
  } else if (op == "Split" && opset < 13) {
    node.inputs.resize(1);
    ints_attr_to_input(node, "split", 1, graph);
  } else if (op == "Upsample" || (op == "Resize" && opset < 11)) {
    to_resize_11(node, graph);
  } else if ((op == "Softmax" || op == "LogSoftmax" || op == "Hardmax") && opset < 13) {
    node.attrs["axis"] = node.attr_int("axis", 1);
    node.attrs["coerce_to_2d"] = int64_t{1};
  }
  trim_inputs(node);
}

}  // namespace kiln::graph
