// Opset normalisation: the same operator written in an old opset (attributes) and a new one
// (inputs) imports to the canonical form and computes the same result.
#include <gtest/gtest.h>

#include <cmath>

#include "compiler/graph/bind.h"
#include "compiler/graph/evaluate.h"
#include "compiler/graph/onnx_import.h"
#include "compiler/graph/passes/pipeline.h"
#include "tests/graph/model_builder.h"

namespace kiln::graph {
namespace {

using test::ModelBuilder;

// Imports, runs the passes and evaluates with x as the only input.
HostTensor run(const ModelBuilder& b, const HostTensor& x) {
  Graph g = import_onnx_bytes(b.bytes(), "m.onnx");
  run_graph_passes(g);
  return evaluate(g, {{"x", x}}).at(g.outputs[0]);
}

const Node& only_node(const Graph& g) {
  EXPECT_EQ(g.nodes.size(), 1u);
  return g.nodes.at(0);
}

std::vector<double> values(const HostTensor& t) {
  return t.to_f64();
}

TEST(Normalize, SliceAttributesBecomeInputs) {
  ModelBuilder old(9);
  old.input("x", DataType::f32(), {int64_t{3}, int64_t{4}});
  onnx::NodeProto& n = old.node("Slice", {"x"}, {"y"});
  test::attr_ints(n, "starts", {1, 0});
  test::attr_ints(n, "ends", {3, -1});
  old.output("y");
  Graph g = import_onnx_bytes(old.bytes(), "m.onnx");
  const Node& s = only_node(g);
  ASSERT_EQ(s.inputs.size(), 3u);
  EXPECT_TRUE(s.attrs.empty());
  EXPECT_EQ(g.initializers.at(s.inputs[1]).to_i64(), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(g.initializers.at(s.inputs[2]).to_i64(), (std::vector<int64_t>{3, -1}));

  ModelBuilder now(13);
  now.input("x", DataType::f32(), {int64_t{3}, int64_t{4}});
  now.initializer("starts", HostTensor::i64_vector({1, 0}));
  now.initializer("ends", HostTensor::i64_vector({3, -1}));
  now.node("Slice", {"x", "starts", "ends"}, {"y"});
  now.output("y");
  HostTensor x = test::random_tensor({3, 4}, 1);
  EXPECT_EQ(values(run(old, x)), values(run(now, x)));
  EXPECT_EQ(run(old, x).shape(), (std::vector<int64_t>{2, 3}));
}

TEST(Normalize, SqueezeUnsqueezeAxesBecomeInputs) {
  ModelBuilder b(11);
  b.input("x", DataType::f32(), {int64_t{1}, int64_t{3}, int64_t{1}});
  test::attr_ints(b.node("Squeeze", {"x"}, {"s"}), "axes", {0, 2});
  test::attr_ints(b.node("Unsqueeze", {"s"}, {"y"}), "axes", {1});
  b.output("y");
  Graph g = import_onnx_bytes(b.bytes(), "m.onnx");
  for (const Node& n : g.nodes) {
    EXPECT_EQ(n.inputs.size(), 2u) << n.op_type;
    EXPECT_FALSE(n.has_attr("axes")) << n.op_type;
  }
  EXPECT_EQ(run(b, test::random_tensor({1, 3, 1}, 2)).shape(), (std::vector<int64_t>{3, 1}));
}

TEST(Normalize, ClipPadSplitReduceAttributesBecomeInputs) {
  ModelBuilder b(10);
  b.input("x", DataType::f32(), {int64_t{2}, int64_t{4}});
  onnx::NodeProto& clip = b.node("Clip", {"x"}, {"c"});
  test::attr_float(clip, "min", -0.25f);
  test::attr_float(clip, "max", 0.5f);
  onnx::NodeProto& pad = b.node("Pad", {"c"}, {"p"});
  test::attr_ints(pad, "pads", {0, 1, 0, 1});
  test::attr_float(pad, "value", 9.0f);
  onnx::NodeProto& split = b.node("Split", {"p"}, {"s0", "s1"});
  test::attr_int(split, "axis", 1);
  test::attr_ints(split, "split", {2, 4});
  onnx::NodeProto& reduce = b.node("ReduceSum", {"s1"}, {"y"});
  test::attr_ints(reduce, "axes", {1});
  test::attr_int(reduce, "keepdims", 0);
  b.output("y");
  Graph g = import_onnx_bytes(b.bytes(), "m.onnx");
  for (const Node& n : g.nodes) EXPECT_TRUE(n.attrs.size() <= 2) << n.op_type;
  EXPECT_EQ(g.nodes[0].inputs.size(), 3u);  // Clip(x, min, max)
  EXPECT_EQ(g.nodes[1].inputs.size(), 3u);  // Pad(c, pads, value)
  EXPECT_EQ(g.nodes[2].inputs.size(), 2u);  // Split(p, split)
  EXPECT_EQ(g.nodes[3].inputs.size(), 2u);  // ReduceSum(s1, axes)
  // Row r of x: [a, b, c, d] -> clip -> [9, a', b', c', d', 9] -> last 4: b' + c' + d' + 9.
  HostTensor x = test::f32_tensor({2, 4}, {1, -1, 0.25, 0.1, -2, 2, 0, 0.3});
  const std::vector<double> y = values(run(b, x));
  EXPECT_FLOAT_EQ(y[0], -0.25 + 0.25 + 0.1f + 9);
  EXPECT_FLOAT_EQ(y[1], 0.5 + 0 + 0.3f + 9);
}

TEST(Normalize, UpsampleBecomesAsymmetricFloorResize) {
  ModelBuilder b(9);
  b.input("x", DataType::f32(), {int64_t{1}, int64_t{1}, int64_t{2}, int64_t{2}});
  b.initializer("scales", test::f32_tensor({4}, {1, 1, 2, 3}));
  test::attr_string(b.node("Upsample", {"x", "scales"}, {"y"}), "mode", "nearest");
  b.output("y");
  Graph g = import_onnx_bytes(b.bytes(), "m.onnx");
  const Node& r = only_node(g);
  EXPECT_EQ(r.op_type, "Resize");
  EXPECT_EQ(r.inputs, (std::vector<std::string>{"x", "", "scales"}));
  EXPECT_EQ(r.attr_string("coordinate_transformation_mode", ""), "asymmetric");
  EXPECT_EQ(r.attr_string("nearest_mode", ""), "floor");
  HostTensor y = run(b, test::f32_tensor({1, 1, 2, 2}, {1, 2, 3, 4}));
  EXPECT_EQ(y.shape(), (std::vector<int64_t>{1, 1, 4, 6}));
  EXPECT_EQ(values(y), (std::vector<double>{1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2,
                                            3, 3, 3, 4, 4, 4, 3, 3, 3, 4, 4, 4}));
}

TEST(Normalize, OldSoftmaxFlattensFromItsAxis) {
  // Before opset 13, Softmax(axis=1) of [2,2,2] normalises over the last 4 values together.
  ModelBuilder b(11);
  b.input("x", DataType::f32(), {int64_t{2}, int64_t{2}, int64_t{2}});
  b.node("Softmax", {"x"}, {"y"});
  b.output("y");
  Graph g = import_onnx_bytes(b.bytes(), "m.onnx");
  EXPECT_EQ(only_node(g).attr_int("coerce_to_2d", 0), 1);
  EXPECT_EQ(only_node(g).attr_int("axis", -1), 1);
  HostTensor y = run(b, test::f32_tensor({2, 2, 2}, {0, 0, 0, 0, 1, 2, 3, 4}));
  std::vector<double> v = values(y);
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(v[i], 0.25, 1e-7);
  double sum = 0;
  for (int i = 4; i < 8; ++i) sum += std::exp(i - 3.0);
  EXPECT_NEAR(v[7], std::exp(4.0) / sum, 1e-7);  // x = 4 among 1..4
}

TEST(Normalize, CastTargetBecomesKilnTypeName) {
  ModelBuilder b(13);
  b.input("x", DataType::f32(), {int64_t{3}});
  onnx::NodeProto& n = b.node("Cast", {"x"}, {"y"});
  test::attr_int(n, "to", onnx::TensorProto::INT32);
  b.output("y");
  Graph g = import_onnx_bytes(b.bytes(), "m.onnx");
  EXPECT_EQ(only_node(g).attr_string("to", ""), "i32");
  HostTensor y = run(b, test::f32_tensor({3}, {-1.7, 2.5, 3.9}));
  EXPECT_EQ(y.dtype(), DataType::i32());
  EXPECT_EQ(y.to_i64(), (std::vector<int64_t>{-1, 2, 3}));  // toward zero
}

TEST(Normalize, ConstantNodesBecomeInitializers) {
  ModelBuilder b(13);
  b.input("x", DataType::f32(), {int64_t{2}});
  test::attr_floats(b.node("Constant", {}, {"c"}), "value_floats", {10, 20});
  b.node("Add", {"x", "c"}, {"y"});
  b.output("y");
  Graph g = import_onnx_bytes(b.bytes(), "m.onnx");
  EXPECT_EQ(g.initializers.at("c").to_f64(), (std::vector<double>{10, 20}));
  EXPECT_EQ(values(run(b, test::f32_tensor({2}, {1, 2}))), (std::vector<double>{11, 22}));
}

}  // namespace
}  // namespace kiln::graph
