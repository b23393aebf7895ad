// What kiln knows about one operator: the attributes it accepts, how many inputs and
// outputs it has, how its output types follow from its input types (shape inference) and
// how to compute it on host tensors (the reference evaluator). One OpDef per operator type,
// listed in registry.cpp; the definitions live in one file per operator family.
//
// Both functions see the node in canonical form (graph.h): an attribute that some opsets
// pass as an input is always an input here. A function throws UserError for bad input
// without naming the node; the caller adds that.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/graph/graph.h"

namespace kiln::graph {

// A concrete type, as operators see them after binding.
struct TensorType {
  DataType dtype;
  std::vector<int64_t> shape;
};

class InferContext {
 public:
  InferContext(const Node& node, std::vector<std::optional<TensorType>> types,
               std::vector<const HostTensor*> values)
      : node_(node), types_(std::move(types)), values_(std::move(values)) {}

  const Node& node() const { return node_; }
  size_t num_inputs() const { return types_.size(); }
  bool has_input(size_t i) const { return i < types_.size() && types_[i].has_value(); }
  // The type of a present input (UserError when the required input is missing).
  const TensorType& input(size_t i) const;
  DataType dtype(size_t i) const { return input(i).dtype; }
  const std::vector<int64_t>& shape(size_t i) const { return input(i).shape; }
  // The input's value when it is a constant (after folding what shapes decide), else null.
  const HostTensor* value(size_t i) const { return has_input(i) ? values_[i] : nullptr; }
  // A constant input as integers; a UserError says that `what` must be a constant.
  std::vector<int64_t> ints(size_t i, const char* what) const;
  std::vector<double> floats(size_t i, const char* what) const;

 private:
  const Node& node_;
  std::vector<std::optional<TensorType>> types_;
  std::vector<const HostTensor*> values_;
};

class EvalContext {
 public:
  EvalContext(const Node& node, std::vector<const HostTensor*> inputs)
      : node_(node), inputs_(std::move(inputs)) {}

  const Node& node() const { return node_; }
  size_t num_inputs() const { return inputs_.size(); }
  bool has_input(size_t i) const { return i < inputs_.size() && inputs_[i] != nullptr; }
  const HostTensor& input(size_t i) const;
  // The types of the inputs, to share shape rules with inference.
  InferContext infer_context() const;

 private:
  const Node& node_;
  std::vector<const HostTensor*> inputs_;
};

using InferFn = std::function<std::vector<TensorType>(const InferContext&)>;
using EvalFn = std::function<std::vector<HostTensor>(const EvalContext&)>;
// Outputs that follow from the input types alone (Shape, Size): constant once shapes are.
using TypeFoldFn = std::function<std::vector<HostTensor>(const InferContext&)>;

struct OpDef {
  explicit OpDef(std::string type, std::vector<std::string> attributes = {}, int min_inputs = 1,
                 int max_inputs = 1, int min_outputs = 1, int max_outputs = 1)
      : type(std::move(type)),
        attributes(std::move(attributes)),
        min_inputs(min_inputs),
        max_inputs(max_inputs),
        min_outputs(min_outputs),
        max_outputs(max_outputs) {}

  std::string type;
  std::vector<std::string> attributes;  // every attribute the operator accepts
  int min_inputs;
  int max_inputs;  // -1: variadic
  int min_outputs;
  int max_outputs;
  InferFn infer;
  EvalFn eval;
  TypeFoldFn fold_from_types;  // empty for most operators
};

// Registers an operator family's definitions (one function per family file).
using OpList = std::vector<OpDef>;
void add_elementwise_ops(OpList& ops);
void add_activation_ops(OpList& ops);
void add_conv_ops(OpList& ops);
void add_pool_ops(OpList& ops);
void add_matmul_ops(OpList& ops);
void add_normalization_ops(OpList& ops);
void add_reduce_ops(OpList& ops);
void add_resize_ops(OpList& ops);
void add_shape_ops(OpList& ops);
void add_data_movement_ops(OpList& ops);
void add_gather_scatter_ops(OpList& ops);
void add_generator_ops(OpList& ops);
void add_recurrent_ops(OpList& ops);
void add_quantize_ops(OpList& ops);
void add_quantized_contrib_ops(OpList& ops);

// The definition of an operator type, or nullptr when kiln does not support it.
const OpDef* find_op(const std::string& op_type);
// Every supported operator type, sorted.
std::vector<std::string> supported_ops();

}  // namespace kiln::graph
