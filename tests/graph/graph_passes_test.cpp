// Graph passes on small models: the pass order and dumps, shape-subgraph folding with a
// symbolic batch, dead-node elimination, Identity/Dropout removal, fused epilogues, and the
// printer's text.
#include <gtest/gtest.h>

#include <cstdlib>

#include "compiler/graph/bind.h"
#include "compiler/graph/evaluate.h"
#include "compiler/graph/onnx_import.h"
#include "compiler/graph/passes/pipeline.h"
#include "compiler/graph/printer.h"
#include "tests/graph/model_builder.h"

namespace kiln::graph {
namespace {

using test::ModelBuilder;

std::vector<std::string> op_types(const Graph& g) {
  std::vector<std::string> ops;
  for (const Node& n : g.nodes) ops.push_back(n.op_type);
  return ops;
}

void expect_same(const HostTensor& got, const HostTensor& want, double tol = 1e-6) {
  ASSERT_EQ(got.shape(), want.shape());
  ASSERT_EQ(got.dtype(), want.dtype());
  const std::vector<double> g = got.to_f64(), w = want.to_f64();
  for (size_t i = 0; i < g.size(); ++i) EXPECT_NEAR(g[i], w[i], tol) << "element " << i;
}

// x[batch,3,4,4] -> Reshape(x, Concat(Unsqueeze(Gather(Shape(x), 0)), [-1])) -> Relu -> y:
// the flatten an exporter writes when the batch is symbolic.
ModelBuilder flatten_by_shape_model() {
  ModelBuilder b;
  b.input("x", DataType::f32(), {std::string("batch"), int64_t{3}, int64_t{4}, int64_t{4}});
  b.initializer("zero", HostTensor::from_i64(DataType::i64(), {}, {0}));
  b.initializer("axes0", HostTensor::i64_vector({0}));
  b.initializer("minus_one", HostTensor::i64_vector({-1}));
  b.node("Shape", {"x"}, {"shape"});
  test::attr_int(b.node("Gather", {"shape", "zero"}, {"n"}), "axis", 0);
  b.node("Unsqueeze", {"n", "axes0"}, {"n1"});
  test::attr_int(b.node("Concat", {"n1", "minus_one"}, {"target"}), "axis", 0);
  b.node("Reshape", {"x", "target"}, {"flat"}, "flatten");
  b.node("Relu", {"flat"}, {"y"});
  b.output("y");
  return b;
}

TEST(GraphPasses, FoldsShapeSubgraphOnceBatchIsBound) {
  Graph g = import_onnx_bytes(flatten_by_shape_model().bytes(), "m.onnx");
  bind_input_shapes(g, {{"batch", {2}}});
  run_graph_passes(g);
  EXPECT_EQ(op_types(g), (std::vector<std::string>{"Reshape", "Relu"}));
  const std::string text = print_graph(g);
  EXPECT_NE(text.find("init   target: i64[2] = [2,-1]"), std::string::npos) << text;
  EXPECT_NE(text.find("%flat = Reshape(x, target) : f32[2,48]  # flatten"), std::string::npos)
      << text;
  // Folding left nothing unread behind.
  EXPECT_EQ(g.initializers.size(), 1u);

  HostTensor x = test::random_tensor({2, 3, 4, 4}, 3);
  HostTensor y = evaluate(g, {{"x", x}}).at("y");
  std::vector<double> want = x.to_f64();
  for (double& v : want) v = std::max(v, 0.0);
  expect_same(y, HostTensor::from_f64(DataType::f32(), {2, 48}, want));
}

TEST(GraphPasses, RunsInListedOrderAndDumps) {
  Graph g = import_onnx_bytes(flatten_by_shape_model().bytes(), "m.onnx");
  bind_input_shapes(g, {{"x", {1, 3, 4, 4}}});
  std::vector<std::string> seen;
  GraphPassOptions options;
  options.after_pass = [&](const std::string& pass, const Graph&) { seen.push_back(pass); };
  setenv("KILN_DUMP_GRAPH", "1", 1);
  testing::internal::CaptureStderr();
  run_graph_passes(g, options);
  const std::string dump = testing::internal::GetCapturedStderr();
  unsetenv("KILN_DUMP_GRAPH");
  EXPECT_EQ(seen, graph_pass_names());
  size_t at = 0;
  for (const std::string& pass : graph_pass_names()) {
    at = dump.find("// after " + pass + "\ngraph \"test\" (opset 13) from m.onnx", at);
    EXPECT_NE(at, std::string::npos) << pass << " missing from the dump:\n" << dump;
  }
}

TEST(GraphPasses, RemovesDeadNodesAndTheirWeights) {
  ModelBuilder b;
  b.input("x", DataType::f32(), {int64_t{2}, int64_t{3}});
  b.initializer("w_used", test::random_tensor({3}, 1));
  b.initializer("w_dead", test::random_tensor({3}, 2));
  b.node("Add", {"x", "w_used"}, {"y"});
  b.node("Mul", {"x", "w_dead"}, {"unused"});
  b.node("Relu", {"unused"}, {"unused2"});
  b.output("y");
  Graph g = import_onnx_bytes(b.bytes(), "m.onnx");
  run_graph_passes(g);
  EXPECT_EQ(op_types(g), std::vector<std::string>{"Add"});
  EXPECT_TRUE(g.initializers.count("w_used"));
  EXPECT_FALSE(g.initializers.count("w_dead"));
  EXPECT_FALSE(g.types.count("unused2"));
}

TEST(GraphPasses, RemovesIdentityAndDropoutKeepingOutputNames) {
  ModelBuilder b(12);
  b.input("x", DataType::f32(), {int64_t{4}});
  b.node("Identity", {"x"}, {"a"});
  b.node("Relu", {"a"}, {"r"});
  b.node("Dropout", {"r"}, {"d"});
  b.node("Identity", {"d"}, {"y"});            // the graph output keeps its name
  b.node("Identity", {"x"}, {"passthrough"});  // input straight to output: must stay
  b.output("y");
  b.output("passthrough");
  Graph g = import_onnx_bytes(b.bytes(), "m.onnx");
  run_graph_passes(g);
  EXPECT_EQ(op_types(g), (std::vector<std::string>{"Relu", "Identity"}));
  EXPECT_EQ(g.nodes[0].inputs, std::vector<std::string>{"x"});
  EXPECT_EQ(g.nodes[0].outputs, std::vector<std::string>{"y"});
  HostTensor x = test::f32_tensor({4}, {-1, 2, -3, 4});
  auto out = evaluate(g, {{"x", x}});
  expect_same(out.at("y"), test::f32_tensor({4}, {0, 2, 0, 4}));
  expect_same(out.at("passthrough"), x);
}

// A Cast to the value's own type and arithmetic with a constant of zeros or ones (x + 0,
// 0 + x, x - 0, x * 1, x / 1) pass the value through; 0 - x, 1 / x, a constant of another
// value, and a neutral constant that broadcasts x wider do not.
TEST(GraphPasses, RemovesNeutralArithmeticAndSameTypeCasts) {
  ModelBuilder b(13);
  b.input("x", DataType::f32(), {int64_t{2}, int64_t{3}});
  b.initializer("zero", test::f32_tensor({}, {0}));
  b.initializer("one", test::f32_tensor({1}, {1}));
  b.initializer("ones", test::f32_tensor({3}, {1, 1, 1}));
  b.initializer("two", test::f32_tensor({}, {2}));
  b.initializer("wide_ones", test::f32_tensor({2, 2, 3}, std::vector<double>(12, 1)));
  auto& cast = b.node("Cast", {"x"}, {"c"});
  test::attr_int(cast, "to", 1);  // FLOAT
  b.node("Add", {"zero", "c"}, {"a"});
  b.node("Sub", {"a", "zero"}, {"s"});
  b.node("Mul", {"s", "ones"}, {"m"});
  b.node("Div", {"m", "one"}, {"y"});  // by then x / 1 to an output: stays, as Identity does
  b.node("Sub", {"zero", "x"}, {"neg"});
  b.node("Div", {"one", "x"}, {"inv"});
  b.node("Mul", {"x", "two"}, {"twice"});
  b.node("Mul", {"x", "wide_ones"}, {"wide"});
  for (const char* out : {"y", "neg", "inv", "twice", "wide"}) b.output(out);
  Graph g = import_onnx_bytes(b.bytes(), "m.onnx");
  run_graph_passes(g);
  EXPECT_EQ(op_types(g), (std::vector<std::string>{"Div", "Sub", "Div", "Mul", "Mul"}));
  EXPECT_EQ(g.nodes[0].inputs[0], "x");
  HostTensor x = test::f32_tensor({2, 3}, {-1, 2, -3, 4, 0.5, 8});
  auto out = evaluate(g, {{"x", x}});
  expect_same(out.at("y"), x);
  expect_same(out.at("neg"), test::f32_tensor({2, 3}, {1, -2, 3, -4, -0.5, -8}));
  expect_same(out.at("inv"), test::f32_tensor({2, 3}, {-1, 0.5, -1.0 / 3, 0.25, 2, 0.125}));
  EXPECT_EQ(out.at("wide").shape(), (std::vector<int64_t>{2, 2, 3}));
}

// Training mode with a ratio of 0 drops nothing (exporters write it for attention dropout
// left at p = 0): the Dropout is removed like an inference one. Any other ratio in training
// mode is refused.
TEST(GraphPasses, DropoutInTrainingModeWithRatioZeroIsAnIdentity) {
  auto model = [](float ratio) {
    ModelBuilder b(13);
    b.input("x", DataType::f32(), {int64_t{3}});
    b.initializer("ratio", test::f32_tensor({}, {ratio}));
    b.initializer("training", HostTensor::from_i64(DataType::boolean(), {}, {1}));
    b.node("Dropout", {"x", "ratio", "training"}, {"d"});
    b.node("Relu", {"d"}, {"y"});
    b.output("y");
    return b.bytes();
  };
  Graph g = import_onnx_bytes(model(0.0f), "m.onnx");
  run_graph_passes(g);
  EXPECT_EQ(op_types(g), std::vector<std::string>{"Relu"});
  expect_same(evaluate(g, {{"x", test::f32_tensor({3}, {-1, 2, 3})}}).at("y"),
              test::f32_tensor({3}, {0, 2, 3}));
  try {
    Graph t = import_onnx_bytes(model(0.1f), "m.onnx");
    run_graph_passes(t);
    ADD_FAILURE() << "Dropout with ratio 0.1 in training mode was accepted";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("training mode"), std::string::npos) << e.what();
  }
}

TEST(GraphPasses, KeepsDropoutWhoseMaskIsRead) {
  ModelBuilder b(12);
  b.input("x", DataType::f32(), {int64_t{3}});
  b.node("Dropout", {"x"}, {"d", "mask"});
  b.node("Cast", {"mask"}, {"m"}).add_attribute()->CopyFrom([] {
    onnx::AttributeProto a;
    a.set_name("to");
    a.set_type(onnx::AttributeProto::INT);
    a.set_i(onnx::TensorProto::FLOAT);
    return a;
  }());
  b.node("Mul", {"d", "m"}, {"y"});
  b.output("y");
  Graph g = import_onnx_bytes(b.bytes(), "m.onnx");
  run_graph_passes(g);
  EXPECT_EQ(op_types(g), (std::vector<std::string>{"Dropout", "Cast", "Mul"}));
  expect_same(evaluate(g, {{"x", test::f32_tensor({3}, {1, 2, 3})}}).at("y"),
              test::f32_tensor({3}, {1, 2, 3}));
}

TEST(GraphPasses, FoldsWeightOnlySubgraphs) {
  // A transposed weight and a Cast of a constant: both fold; the data path stays.
  ModelBuilder b;
  b.input("x", DataType::f32(), {int64_t{2}, int64_t{3}});
  b.initializer("w", test::random_tensor({4, 3}, 5));
  test::attr_ints(b.node("Transpose", {"w"}, {"wt"}), "perm", {1, 0});
  b.node("MatMul", {"x", "wt"}, {"y"});
  b.output("y");
  Graph g = import_onnx_bytes(b.bytes(), "m.onnx");
  run_graph_passes(g);
  EXPECT_EQ(op_types(g), std::vector<std::string>{"MatMul"});
  EXPECT_EQ(g.initializers.at("wt").shape(), (std::vector<int64_t>{3, 4}));
}

// A hand-built graph with a fused epilogue evaluates like the unfused chain.
TEST(GraphPasses, EpilogueEvaluatesLikeTheChain) {
  Graph g;
  g.name = "fused";
  g.inputs = {"x"};
  g.types["x"] = ValueType::of(DataType::f32(), {1, 2, 5, 5});
  g.initializers["w"] = test::random_tensor({3, 2, 3, 3}, 8);
  g.initializers["b"] = test::random_tensor({1, 3, 1, 1}, 9);
  Node conv;
  conv.op_type = "Conv";
  conv.name = "conv";
  conv.inputs = {"x", "w"};
  conv.outputs = {"y"};
  conv.attrs["pads"] = std::vector<int64_t>{1, 1, 1, 1};
  Node add;
  add.op_type = "Add";
  add.inputs = {"b"};
  Node relu;
  relu.op_type = "Relu";
  conv.epilogue = {add, relu};
  g.nodes = {conv};
  g.outputs = {"y"};

  Graph chain = g;
  chain.nodes[0].epilogue.clear();
  chain.nodes[0].outputs = {"c"};
  Node add2 = add, relu2 = relu;
  add2.inputs = {"c", "b"};
  add2.outputs = {"s"};
  relu2.inputs = {"s"};
  relu2.outputs = {"y"};
  chain.nodes.push_back(add2);
  chain.nodes.push_back(relu2);

  run_graph_passes(g);
  EXPECT_NE(print_graph(g).find("%y = Conv(x, w) {pads=[1,1,1,1]} -> Add(_, b) -> Relu(_) : "
                                "f32[1,3,5,5]  # conv"),
            std::string::npos)
      << print_graph(g);
  HostTensor x = test::random_tensor({1, 2, 5, 5}, 10);
  expect_same(evaluate(g, {{"x", x}}).at("y"), evaluate(chain, {{"x", x}}).at("y"));
}

TEST(GraphPrinter, PrintsInputsWeightsNodesAndOutputs) {
  ModelBuilder b;
  b.input("x", DataType::f32(), {std::string("n"), int64_t{4}});
  b.initializer("scale", test::f32_tensor({4}, {1, 2, 3, 4}));
  b.initializer("big", test::random_tensor({16}, 1));
  b.node("Mul", {"x", "scale"}, {"m"}, "mul0");
  b.node("Add", {"m", "big"}, {"y"});
  test::attr_int(b.node("Softmax", {"x"}, {"s"}), "axis", -1);
  b.output("y");
  b.output("s");
  Graph g = import_onnx_bytes(b.bytes(), "m.onnx");
  EXPECT_EQ(print_graph(g),
            "graph \"test\" (opset 13) from m.onnx\n"
            "  input  x: f32[n,4]\n"
            "  init   big: f32[16]\n"
            "  init   scale: f32[4] = [1,2,3,4]\n"
            "  %m = Mul(x, scale) : ?  # mul0\n"
            "  %y = Add(m, big) : ?\n"
            "  %s = Softmax(x) {axis=-1} : ?\n"
            "  output y\n"
            "  output s\n");
}

}  // namespace
}  // namespace kiln::graph
