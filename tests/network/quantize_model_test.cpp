// kiln quantize's library (compiler/graph/quantize_model.h) on a small float CNN: the QDQ
// model it writes keeps the float model's answers within the quantization error, compiles
// onto the int8 kernels (two QLinearConv layers), and the compiled model matches the
// reference evaluator run on that QDQ model. --keep-float leaves a layer in float; bad
// requests are one UserError.
#include "compiler/graph/quantize_model.h"

#include <gtest/gtest.h>

#include "compiler/base/error.h"
#include "compiler/graph/onnx_import.h"
#include "tests/network/network_check.h"
#include "tests/network/test_models.h"
#include "tests/test_util.h"

namespace kiln::network::test {
namespace {

using graph::DataType;
using graph::HostTensor;
using graph::test::attr_ints;
using graph::test::ModelBuilder;
using graph::test::random_tensor;

// x -> Conv 3x3 -> Relu -> Conv 1x1 -> Relu -> GlobalAveragePool -> Flatten -> Gemm. Four
// input channels: with three the first conv keeps its float path on a CPU without VNNI
// (network/int8_choice.h), and the counts below would depend on the machine.
std::string float_cnn() {
  ModelBuilder b(13);
  b.input("x", DataType::f32(), {int64_t{1}, int64_t{4}, int64_t{12}, int64_t{12}});
  b.initializer("w1", random_tensor({8, 4, 3, 3}, 1, 0.4f));
  b.initializer("b1", random_tensor({8}, 2, 0.1f));
  attr_ints(b.node("Conv", {"x", "w1", "b1"}, {"c1"}, "conv1"), "pads", {1, 1, 1, 1});
  b.node("Relu", {"c1"}, {"r1"});
  b.initializer("w2", random_tensor({8, 8, 1, 1}, 3, 0.5f));
  b.initializer("b2", random_tensor({8}, 4, 0.1f));
  b.node("Conv", {"r1", "w2", "b2"}, {"c2"}, "conv2");
  b.node("Relu", {"c2"}, {"r2"});
  b.node("GlobalAveragePool", {"r2"}, {"p"});
  b.node("Flatten", {"p"}, {"f"});
  b.initializer("w3", random_tensor({8, 5}, 5, 0.5f));
  b.initializer("b3", random_tensor({5}, 6, 0.1f));
  b.node("Gemm", {"f", "w3", "b3"}, {"y"}, "fc");
  b.output("y");
  return b.bytes();
}

std::vector<std::map<std::string, HostTensor>> calibration(int n) {
  std::vector<std::map<std::string, HostTensor>> sets;
  for (int i = 0; i < n; ++i) sets.push_back({{"x", random_tensor({1, 4, 12, 12}, 100 + i, 1.0f)}});
  return sets;
}

int count_nodes(const std::string& bytes, const std::string& op) {
  const graph::Graph g = graph::import_onnx_bytes(bytes, "q.onnx");
  return static_cast<int>(std::count_if(g.nodes.begin(), g.nodes.end(),
                                        [&](const graph::Node& n) { return n.op_type == op; }));
}

TEST(QuantizeModel, WritesAQdqModelThatCompilesOntoInt8Kernels) {
  graph::QuantizeReport r;
  const std::string q = graph::quantize_model(float_cnn(), "cnn.onnx", calibration(4), {}, &r);
  EXPECT_EQ(r.weights, 3);
  EXPECT_EQ(r.activations, 4);  // x, r1, r2 (the Relus' outputs) and f
  EXPECT_GT(count_nodes(q, "QuantizeLinear"), 0);
  ASSERT_EQ(r.outputs.size(), 1u);
  EXPECT_LT(r.outputs[0].relative_rms, 0.05) << "quantization cost too much on y";
  EXPECT_FALSE(r.worst_layers.empty());
  // The compiled QDQ model against the reference evaluator on the same QDQ model: the int8
  // convs are exact where the float reference rounds, so within a little of its output.
  const CompileReport c = expect_host_matches_reference(
      q, {}, {{"x", random_tensor({1, 4, 12, 12}, 9, 1.0f)}}, {}, 0.02);
  EXPECT_EQ(count(layer_ops(c), "QLinearConv"), 2);
}

TEST(QuantizeModel, KeepFloatLeavesALayerInFloat) {
  graph::QuantizeReport r;
  const std::string q =
      graph::quantize_model(float_cnn(), "cnn.onnx", calibration(2), {{"conv2"}}, &r);
  EXPECT_EQ(r.kept_float, std::vector<std::string>{"conv2"});
  EXPECT_EQ(r.weights, 2);
  const CompileReport c = expect_host_matches_reference(
      q, {}, {{"x", random_tensor({1, 4, 12, 12}, 9, 1.0f)}}, {}, 0.02);
  EXPECT_EQ(count(layer_ops(c), "QLinearConv"), 1);
}

TEST(QuantizeModel, BadRequestsAreOneUserError) {
  EXPECT_THROW(graph::quantize_model(float_cnn(), "cnn.onnx", {}, {}, nullptr), UserError);
  const std::string msg = kiln::test::user_error_of(
      [&] { graph::quantize_model(float_cnn(), "cnn.onnx", calibration(1), {{"nope"}}, nullptr); });
  EXPECT_NE(msg.find("--keep-float nope"), std::string::npos) << msg;
  ModelBuilder b(13);
  b.input("x", DataType::f32(), {int64_t{2}, int64_t{3}});
  b.node("Relu", {"x"}, {"y"});
  b.output("y");
  EXPECT_THROW(graph::quantize_model(b.bytes(), "relu.onnx",
                                     {{{"x", random_tensor({2, 3}, 1, 1.0f)}}}, {}, nullptr),
               UserError);
}

}  // namespace
}  // namespace kiln::network::test
