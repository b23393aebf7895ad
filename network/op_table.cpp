#include "network/op_table.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <set>

#include "compiler/graph/ops/quantized_contrib.h"
#include "compiler/graph/rewrites/decompose_ops.h"
#include "network/op_mapping.h"

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
  auto with_coefficients = [](std::string op) {
    return [op](Graph& g, const Node& n) { return map_coefficient_activation(g, n, op); };
  };
  auto reduction = [](std::string op) {
    return [op](Graph& g, const Node& n) { return map_reduce(g, n, op); };
  };
  static const std::map<std::string, Mapper> k = {
      {"Conv", map_conv},
      {"ConvTranspose", map_conv_transpose},
      {"Gemm", map_dense},
      {"MatMul", map_matmul},
      {"Attention", map_attention},
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
      {"Max", [](Graph& g, const Node& n) { return map_min_max(g, n, "max"); }},
      {"Min", [](Graph& g, const Node& n) { return map_min_max(g, n, "min"); }},
      {"MaxPool", map_pool},
      {"AveragePool", map_pool},
      {"GlobalAveragePool", map_global_avg_pool},
      {"BatchNormalization", map_batch_norm},
      {"ScaleShift", map_scale_shift},
      {"Softmax", map_softmax},
      {"Flatten", map_reshape},
      {"Reshape", map_reshape},
      {"Squeeze", map_reshape},
      {"Unsqueeze", map_reshape},
      {"Concat", map_concat},
      {"ChannelShuffle", map_channel_shuffle},
      {"Transpose", map_transpose},
      {"Erf", unary("erf")},
      {"Gelu", unary("gelu")},
      {"Silu", unary("silu")},
      {"LeakyRelu", map_leaky_relu},
      {"HardSigmoid", map_hard_sigmoid},
      {"HardSwish", unary("hard_swish")},
      {"PRelu", unary("prelu")},
      {"Softplus", unary("softplus")},
      {"Mish", unary("mish")},
      {"Softsign", unary("softsign")},
      {"Elu", with_coefficients("elu")},
      {"Celu", with_coefficients("celu")},
      {"Selu", with_coefficients("selu")},
      {"ThresholdedRelu", with_coefficients("thresholded_relu")},
      {"Floor", unary("floor")},
      {"Ceil", unary("ceil")},
      {"Round", unary("round")},
      {"Sign", unary("sign")},
      {"Sin", unary("sin")},
      {"Cos", unary("cos")},
      {"LayerNormalization", map_layer_norm},
      {"Slice", map_slice},
      {"Gather", map_gather},
      {"Pad", map_pad},
      {"Resize", map_resize},
      {"ReduceSum", reduction("reduce_sum")},
      {"ReduceMean", reduction("reduce_mean")},
      {"ReduceMax", reduction("reduce_max")},
      {"ReduceMin", reduction("reduce_min")},
      {"ArgMax", [](Graph& g, const Node& n) { return map_arg_reduce(g, n, "arg_max"); }},
      {"ArgMin", [](Graph& g, const Node& n) { return map_arg_reduce(g, n, "arg_min"); }},
      {"CumSum", map_cumsum},
      {"GlobalMaxPool", reduction("reduce_max")},
      {"Cast", map_cast},
      {"Expand", map_expand},
      {"Equal", unary("equal")},
      {"Less", unary("less")},
      {"Greater", unary("greater")},
      {"LessOrEqual", unary("less_equal")},
      {"GreaterOrEqual", unary("greater_equal")},
      {"Not", unary("not")},
      {"And", unary("and")},
      {"Or", unary("or")},
      {"Xor", unary("xor")},
      {"Where", unary("where")},
      {"Identity", unary("copy")},  // only a constant output's copy survives remove_identities
      {"QuantizeLinear", map_quantize},
      {"DequantizeLinear", map_dequantize},
      {"QLinearConv", map_qlinear_conv},
      {"QLinearMatMul", map_qlinear_matmul},
      {"QLinearAdd", map_qlinear_add},
      {"QGemm", map_qgemm},
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
  // Moves that copy 8-bit values as they are (a quantized model's Flatten, Reshape, Slice or
  // Concat between its integer layers) run in that type.
  static const std::set<std::string> kCopies = {"reshape", "slice", "concat", "channel_shuffle"};
  if (kCopies.count(m.workload.op) && !n.inputs.empty() && g.type_of(n.inputs[0])) {
    const graph::DataType t = g.type_of(n.inputs[0])->dtype;
    if (t == graph::DataType::u8() || t == graph::DataType::i8()) m.workload.dtype = t;
  }
  // Operands are what the kernel reads (shape inputs such as Reshape's are not among them).
  // Half types only where the precision pass puts them: conv2d and dense have half kernels.
  const bool half_ok = m.workload.op == "conv2d" || m.workload.op == "dense";
  // 8-bit values only where a quantized workload (an int8 kernel, quantize, dequantize)
  // reads or writes them; such a workload's other integers are its constants (an int32 bias).
  const bool int8_ok = m.workload.dtype == graph::DataType::u8() || m.workload.dtype == graph::DataType::i8();
  bool non_float = false;
  std::vector<std::string> values = {n.outputs[0]};
  for (const auto& [name, v] : m.operands) values.push_back(v);
  for (const std::string& v : values) {
    std::optional<graph::ValueType> t = g.type_of(v);
    const bool half = t && (t->dtype == graph::DataType::bf16() || t->dtype == graph::DataType::f16());
    const bool int8 = t && (t->dtype == graph::DataType::u8() || t->dtype == graph::DataType::i8());
    node_check(t && (holds_dtype(t->dtype) || (half && half_ok) || (int8 && int8_ok)))
        << "value '" << v << "' is " << (t ? t->dtype.str() : "untyped") << "; " << kDtypeRule;
    non_float |= t->dtype != graph::DataType::f32() && !half && !int8_ok;
  }
  // Integers and truth values are held in f32, which keeps them exact through comparisons,
  // selections, gathers and copies, and through sums, differences, products, quotients
  // (truncated, as ONNX divides integers) and running sums while they stay below 2^24: token
  // positions, box coordinates, relative distances and mask counts do.
  static const std::set<std::string> kExactInF32 = {
      "Equal",     "Less",      "Greater",       "LessOrEqual", "GreaterOrEqual",
      "Not",       "Where",     "Cast",          "Gather",      "Expand",
      "Reshape",   "Flatten",   "Squeeze",       "Unsqueeze",   "Concat",
      "Slice",     "Transpose", "Add",           "Sub",         "Mul",
      "Div",       "Neg",       "Abs",           "Max",         "Min",
      "ReduceSum", "ReduceMax", "ReduceMin",     "CumSum",      "ArgMax",
      "ArgMin",    "Sign",      "Pad",           "And",         "Or",
      "Xor",       "Identity",  "ChannelShuffle"};
  node_check(!non_float || kExactInF32.count(n.op_type))
      << "integer or bool " << n.op_type << " is not supported (integer and bool values take "
      << "part in comparisons, Not, And, Or, Xor, Where, Cast, Gather, data movement (Pad too), +, "
         "-, *, /, Abs, "
         "Neg, "
      << "Max, Min, Sign, ReduceSum/Max/Min, CumSum and ArgMax/ArgMin only)";
  const std::optional<graph::ValueType> out = g.type_of(n.outputs[0]);
  if (n.op_type == "Div" &&
      (out->dtype == graph::DataType::i64() || out->dtype == graph::DataType::i32()))
    m.workload.epilogue.push_back("trunc");  // 7 / 2 is 3 between integers
  return m;
}

bool holds_dtype(graph::DataType t) {
  return t == graph::DataType::f32() || t == graph::DataType::boolean() ||
         t == graph::DataType::i64() || t == graph::DataType::i32();
}

std::vector<std::string> supported_op_types() {
  std::vector<std::string> out;
  for (const auto& [name, mapper] : table()) out.push_back(name);
  // Rewritten before mapping into nodes of the table (compiler/graph/rewrites/rewrites.h).
  for (const std::string& op : graph::decomposed_op_types()) out.push_back(op);
  for (const char* op : {"LSTM", "GRU", "RNN"}) out.push_back(op);
  // ONNX Runtime's quantized operators, expanded to their QDQ form (QLinearAdd has a kernel).
  for (const std::string& op : graph::quantized_contrib_ops())
    if (std::find(out.begin(), out.end(), op) == out.end()) out.push_back(op);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace kiln::network
