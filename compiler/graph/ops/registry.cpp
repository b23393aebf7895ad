// The operator table: every supported operator, from an explicit list of family files (a
// static library drops self-registering objects nothing references).
#include <algorithm>
#include <map>

#include "compiler/graph/ops/op.h"

namespace kiln::graph {

namespace {

const std::map<std::string, OpDef>& op_table() {
  static const std::map<std::string, OpDef> table = [] {
    OpList ops;
    add_elementwise_ops(ops);
    add_activation_ops(ops);
    add_conv_ops(ops);
    add_pool_ops(ops);
    add_matmul_ops(ops);
    add_normalization_ops(ops);
    add_reduce_ops(ops);
    add_resize_ops(ops);
    add_shape_ops(ops);
    add_data_movement_ops(ops);
    add_gather_scatter_ops(ops);
    add_generator_ops(ops);
    add_recurrent_ops(ops);
    add_quantize_ops(ops);
    add_quantized_contrib_ops(ops);
    std::map<std::string, OpDef> t;
    for (OpDef& def : ops) {
      internal_check(!t.count(def.type)) << "operator " << def.type << " defined twice";
      std::string type = def.type;
      t.emplace(std::move(type), std::move(def));
    }
    return t;
  }();
  return table;
}

}  // namespace

const OpDef* find_op(const std::string& op_type) {
  auto it = op_table().find(op_type);
  return it == op_table().end() ? nullptr : &it->second;
}

std::vector<std::string> supported_ops() {
  std::vector<std::string> names;
  for (const auto& [name, _] : op_table()) names.push_back(name);
  return names;
}

const TensorType& InferContext::input(size_t i) const {
  user_check(has_input(i)) << node_.op_type << " needs input " << i;
  return *types_[i];
}

std::vector<int64_t> InferContext::ints(size_t i, const char* what) const {
  const HostTensor* v = value(i);
  user_check(v != nullptr) << node_.op_type << " input " << i << " (" << what
                           << ") must be a constant, or computed from shapes only, but it "
                              "depends on the model's input data";
  return v->to_i64();
}

std::vector<double> InferContext::floats(size_t i, const char* what) const {
  const HostTensor* v = value(i);
  user_check(v != nullptr) << node_.op_type << " input " << i << " (" << what
                           << ") must be a constant, or computed from shapes only, but it "
                              "depends on the model's input data";
  return v->to_f64();
}

const HostTensor& EvalContext::input(size_t i) const {
  user_check(has_input(i)) << node_.op_type << " needs input " << i;
  return *inputs_[i];
}

InferContext EvalContext::infer_context() const {
  std::vector<std::optional<TensorType>> types;
  for (const HostTensor* t : inputs_) {
    if (t)
      types.push_back(TensorType{t->dtype(), t->shape()});
    else
      types.push_back(std::nullopt);
  }
  return InferContext(node_, std::move(types), inputs_);
}

}  // namespace kiln::graph
