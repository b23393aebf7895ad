#include "compiler/network/op_table.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include "compiler/network/op_mapping.h"

namespace kiln::network {

using graph::Graph;
using graph::Node;
using namespace mapping;

namespace {

using Mapper = std::function<MappedNode(Graph&, const Node&)>;

const std::map<std::string, Mapper>& table() {
  auto unary = [](std::string op) {
    return [op](Graph& g, const Node& n) { return map_elementwise(g, n, op); };
  };
  auto reduction = [](std::string op) {
    return [op](Graph& g, const Node& n) { return map_reduce(g, n, op); };
  };
  static const std::map<std::string, Mapper> k = {
      {"Conv", map_conv},
      {"ConvTranspose", map_conv_transpose},
      {"Gemm", map_dense},
      {"MatMul", map_matmul},
      {"Relu", unary("relu")},
      {"Sigmoid", unary("sigmoid")},
      {"Tanh", unary("tanh")},
      {"Exp", unary("exp")},
      {"Log", unary("log")},
      {"Sqrt", unary("sqrt")},
      {"Neg", unary("neg")},
      {"Abs", unary("abs")},
      {"Reciprocal", unary("reciprocal")},
      {"Clip", map_clip},
      {"Add", unary("add")},
      {"Sub", unary("sub")},
      {"Mul", unary("mul")},
      {"Div", unary("div")},
      {"Pow", unary("pow")},
      {"Max", unary("max")},
      {"Min", unary("min")},
      {"MaxPool", map_pool},
      {"AveragePool", map_pool},
      {"GlobalAveragePool", map_global_avg_pool},
      {"BatchNormalization", map_batch_norm},
      {"Softmax", map_softmax},
      {"Flatten", map_reshape},
      {"Reshape", map_reshape},
      {"Squeeze", map_reshape},
      {"Unsqueeze", map_reshape},
      {"Concat", map_concat},
      {"Transpose", map_transpose},
      {"Erf", unary("erf")},
      {"Gelu", unary("gelu")},
      {"LeakyRelu", map_leaky_relu},
      {"HardSigmoid", map_hard_sigmoid},
      {"HardSwish", unary("hard_swish")},
      {"PRelu", unary("prelu")},
      {"LayerNormalization", map_layer_norm},
      {"Slice", map_slice},
      {"Gather", map_gather},
      {"Pad", map_pad},
      {"Resize", map_resize},
      {"ReduceSum", reduction("reduce_sum")},
      {"ReduceMean", reduction("reduce_mean")},
      {"ReduceMax", reduction("reduce_max")},
      {"GlobalMaxPool", reduction("reduce_max")},
      {"Cast", map_reshape},  // f32 to f32 (any other type is refused as every non-f32 value)
  };
  return k;
}

}  // namespace

MappedNode map_node(Graph& g, const Node& n) {
  auto it = table().find(n.op_type);
  if (it == table().end()) {
    std::string names;
    for (const std::string& s : supported_op_types()) names += (names.empty() ? "" : ", ") + s;
    user_error() << g.describe(n) << ": operator " << n.op_type
                 << " is not supported by kiln's kernels (supported: " << names << ")";
  }
  MappedNode m = it->second(g, n);
  // Operands are what the kernel reads (shape inputs such as Reshape's are not among them).
  // Half types only where the precision pass puts them: conv2d and dense have half kernels.
  const bool half_ok = m.workload.op == "conv2d" || m.workload.op == "dense";
  for (const auto& [name, v] : m.operands) {
    std::optional<graph::ValueType> t = g.type_of(v);
    const bool half = t && (t->dtype == graph::DataType::bf16() || t->dtype == graph::DataType::f16());
    node_check(t && (t->dtype == graph::DataType::f32() || (half && half_ok)))
        << "input '" << v << "' is " << (t ? t->dtype.str() : "untyped")
        << "; only f32 networks are supported";
  }
  return m;
}

std::vector<std::string> supported_op_types() {
  std::vector<std::string> out;
  for (const auto& [name, mapper] : table()) out.push_back(name);
  return out;
}

}  // namespace kiln::network
