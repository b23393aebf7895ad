// The graph IR: what the ONNX frontend produces and every graph pass (shape inference,
// constant folding, and later fusion, layout and memory planning) reads and rewrites.
//
// Values are named (as in ONNX): a node's inputs and outputs are value names, "" marks an
// omitted optional one. A value is a graph input, an initializer (a constant with data) or
// the output of exactly one node. Shapes may hold symbolic dimensions ("batch") until
// bind_input_shapes gives them sizes; shape inference then makes every shape concrete.
//
// Operators are in a canonical form whatever opset the model came from: attributes that
// later opsets moved to inputs (Slice starts, Reshape shape, Squeeze axes, Pad pads, Clip
// bounds, Split sizes, reduction axes, Resize scales) are always inputs (normalize.h).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "compiler/graph/tensor.h"

namespace kiln::graph {

// One dimension: a size, or a symbol that a binding will give a size.
struct Dim {
  int64_t value = -1;  // >= 0 once known
  std::string symbol;  // the symbol's name when unknown; empty for an unnamed dimension

  bool known() const { return value >= 0; }
  static Dim of(int64_t v) { return Dim{v, {}}; }
  static Dim symbolic(std::string name) { return Dim{-1, std::move(name)}; }
  bool operator==(const Dim&) const = default;
};
using Shape = std::vector<Dim>;

// "[batch,3,224,224]"; an unnamed unknown dimension prints as "?".
std::string shape_str(const Shape& shape);
Shape to_shape(const std::vector<int64_t>& dims);

// The element type and shape of a value; `shape` is empty when not even the rank is known.
struct ValueType {
  DataType dtype = DataType::f32();
  std::optional<Shape> shape;

  bool is_concrete() const;
  // The sizes of a concrete shape (InternalError otherwise).
  std::vector<int64_t> dims() const;
  static ValueType of(DataType dtype, const std::vector<int64_t>& dims) {
    return {dtype, to_shape(dims)};
  }
  bool operator==(const ValueType&) const = default;
};
// "f32[1,3,224,224]", "f32[?]" (rank unknown: "f32[...]").
std::string type_str(const ValueType& type);

// An attribute value, with ONNX's kinds.
using AttrValue = std::variant<int64_t, float, std::string, std::vector<int64_t>,
                               std::vector<float>, std::vector<std::string>, HostTensor>;
// "int", "float", "string", "ints", "floats", "strings", "tensor".
const char* attr_kind_name(const AttrValue& v);

struct Node {
  std::string name;
  std::string op_type;
  std::vector<std::string> inputs;   // "" for an omitted optional input
  std::vector<std::string> outputs;  // "" for an omitted optional output
  std::map<std::string, AttrValue> attrs;
  int source_index = -1;  // the node's index in the file it came from, for messages

  // Elementwise operators fused into this node by a later pass, applied in order to its
  // first output. Each one's `inputs` are its operands after the running value (a Relu has
  // none, an Add of a bias has one); its outputs are unused.
  std::vector<Node> epilogue;

  bool has_input(size_t i) const { return i < inputs.size() && !inputs[i].empty(); }
  bool has_output(size_t i) const { return i < outputs.size() && !outputs[i].empty(); }
  bool has_attr(const std::string& key) const { return attrs.count(key) != 0; }

  // Typed attribute reads with a default; a UserError names the attribute when it has
  // another kind.
  int64_t attr_int(const std::string& key, int64_t fallback) const;
  float attr_float(const std::string& key, float fallback) const;
  std::string attr_string(const std::string& key, const std::string& fallback) const;
  std::vector<int64_t> attr_ints(const std::string& key,
                                 const std::vector<int64_t>& fallback = {}) const;
  std::vector<float> attr_floats(const std::string& key,
                                 const std::vector<float>& fallback = {}) const;
  const HostTensor* attr_tensor(const std::string& key) const;  // nullptr when absent
};

class Graph {
 public:
  std::string name;
  std::string source;  // the file the graph came from (or a label), for messages
  int64_t opset = 0;   // the model's default-domain opset version
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  std::vector<Node> nodes;  // in topological order
  std::map<std::string, HostTensor> initializers;
  // Types of graph inputs, outputs and (after shape inference) every value. Initializers'
  // types come from their data.
  std::map<std::string, ValueType> types;

  bool is_constant(const std::string& value) const { return initializers.count(value) != 0; }
  // The type of a value: declared or inferred, or its initializer's; nullptr if unknown.
  std::optional<ValueType> type_of(const std::string& value) const;
  // `base`, or `base_1`, `base_2`... whichever no value of the graph uses yet.
  std::string unique_name(const std::string& base) const;
  // Adds `value` as an initializer under a fresh name derived from `base`; returns the name.
  std::string add_constant(const std::string& base, HostTensor value);
  // "<source>: node 12 'Conv_12' (Conv)", for messages.
  std::string describe(const Node& node) const;
};

// Puts nodes in dependency order. A UserError names the node that reads a value nothing
// defines (a missing initializer or input) or that sits on a cycle.
void sort_topologically(Graph& graph);

}  // namespace kiln::graph
