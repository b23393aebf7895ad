// Inputs the network compiler must refuse with one clear UserError, leaving no model behind.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "network/compile_network.h"
#include "tests/network/test_models.h"

namespace kiln::network::test {
namespace {

std::string compile_error(const std::string& bytes, const graph::ShapeBindings& shapes = {}) {
  TempDir dir;
  std::string onnx = dir.path() + "/net.onnx";
  std::ofstream(onnx, std::ios::binary) << bytes;
  CompileOptions o{onnx, host_target(), {}, shapes, dir.path() + "/out"};
  try {
    compile_network(o);
  } catch (const UserError& e) {
    EXPECT_FALSE(std::filesystem::exists(dir.path() + "/out/model.so"));
    return e.what();
  }
  ADD_FAILURE() << "compiled";
  return "";
}

TEST(CompileNetworkErrors, UnsupportedOpNamesNodeAndOp) {
  graph::test::ModelBuilder b(13);
  b.input("x", graph::DataType::f32(), {1, 4});
  b.node("Hardmax", {"x"}, {"y"}, "my_hardmax");
  b.output("y");
  std::string msg = compile_error(b.bytes());
  EXPECT_NE(msg.find("my_hardmax"), std::string::npos) << msg;
  EXPECT_NE(msg.find("Hardmax"), std::string::npos) << msg;
  EXPECT_NE(msg.find("not supported"), std::string::npos) << msg;
  // One line that lists what is supported, the operators added for transformers among them.
  EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  for (const char* op : {"LayerNormalization", "Erf", "Slice", "Gather", "PRelu"})
    EXPECT_NE(msg.find(op), std::string::npos) << op << " missing from: " << msg;
}

// Index ops whose indices are computed, and scatters that reduce, are refused naming the node;
// so is BatchNormalization in training mode over activations.
TEST(CompileNetworkErrors, ComputedIndicesReducingScattersAndTrainingBatchNorm) {
  graph::test::ModelBuilder b(16);
  b.input("x", graph::DataType::f32(), {2, 3});
  b.input("i", graph::DataType::i64(), {2, 3});
  graph::test::attr_int(b.node("GatherElements", {"x", "i"}, {"y"}, "computed_gather"), "axis", 1);
  b.output("y");
  std::string msg = compile_error(b.bytes());
  EXPECT_NE(msg.find("computed_gather"), std::string::npos) << msg;
  EXPECT_NE(msg.find("computed indices"), std::string::npos) << msg;

  graph::test::ModelBuilder r(16);
  r.input("x", graph::DataType::f32(), {2, 3});
  r.initializer("i", graph::HostTensor::from_i64(graph::DataType::i64(), {1, 1}, {1}));
  r.input("u", graph::DataType::f32(), {1, 3});
  graph::test::attr_string(r.node("ScatterND", {"x", "i", "u"}, {"y"}, "adding_scatter"),
                           "reduction", "add");
  r.output("y");
  msg = compile_error(r.bytes());
  EXPECT_NE(msg.find("adding_scatter"), std::string::npos) << msg;
  EXPECT_NE(msg.find("reduction 'add'"), std::string::npos) << msg;

  graph::test::ModelBuilder t(15);
  t.input("x", graph::DataType::f32(), {2, 3, 4, 4});
  for (const char* s : {"scale", "bias", "mean", "var"})
    t.initializer(s, graph::test::f32_tensor({3}, {1, 1, 1}));
  auto& bn =
      t.node("BatchNormalization", {"x", "scale", "bias", "mean", "var"}, {"y"}, "training_bn");
  graph::test::attr_int(bn, "training_mode", 1);
  t.output("y");
  msg = compile_error(t.bytes());
  EXPECT_NE(msg.find("training_bn"), std::string::npos) << msg;
  EXPECT_NE(msg.find("training mode"), std::string::npos) << msg;
}

TEST(CompileNetworkErrors, UnboundSymbolicDimIsListed) {
  std::string msg = compile_error(conv_bn_relu_pool_gemm_softmax());
  EXPECT_NE(msg.find("batch"), std::string::npos) << msg;
}

TEST(CompileNetworkErrors, MalformedFile) {
  std::string msg = compile_error("this is not an onnx protobuf");
  EXPECT_NE(msg.find("net.onnx"), std::string::npos) << msg;
}

// Asymmetric pads become a Pad node before a Conv or MaxPool (explicit_pads.h); an
// AveragePool that leaves padding out of its count cannot take that Pad.
TEST(CompileNetworkErrors, AsymmetricPadsOfAnAveragePoolNotCountingThemAreRefused) {
  graph::test::ModelBuilder b(13);
  b.input("x", graph::DataType::f32(), {1, 2, 6, 6});
  auto& n = b.node("AveragePool", {"x"}, {"y"}, "odd_conv");
  graph::test::attr_ints(n, "kernel_shape", {3, 3});
  graph::test::attr_ints(n, "pads", {0, 0, 1, 1});
  b.output("y");
  std::string msg = compile_error(b.bytes());
  EXPECT_NE(msg.find("odd_conv"), std::string::npos) << msg;
  EXPECT_NE(msg.find("asymmetric"), std::string::npos) << msg;
}

// Integers are held in f32, exact through comparisons, selections, gathers, copies, sums,
// products and quotients: arithmetic outside those (an integer Pow), and types kiln does not
// hold at all, are refused naming the node.
TEST(CompileNetworkErrors, IntegerArithmeticAndOtherTypesNameTheReason) {
  struct Case {
    graph::DataType dtype;
    const char* op;
    const char* reason;
  };
  for (const Case& c :
       {Case{graph::DataType::i64(), "Pow", "integer or bool Pow is not supported"},
        Case{graph::DataType::f64(), "Add", "is f64; kiln compiles f32 networks"}}) {
    graph::test::ModelBuilder b(13);
    b.input("x", c.dtype, {4, 6});
    b.input("y", c.dtype, {4, 6});
    b.node(c.op, {"x", "y"}, {"z"}, "typed_node");
    b.output("z");
    std::string msg = compile_error(b.bytes());
    EXPECT_NE(msg.find(c.reason), std::string::npos) << msg;
    if (c.dtype == graph::DataType::i64()) EXPECT_NE(msg.find("typed_node"), std::string::npos) << msg;
  }
}

}  // namespace
}  // namespace kiln::network::test
