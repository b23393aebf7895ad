// Inputs the network compiler must refuse with one clear UserError, leaving no model behind.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "compiler/network/compile_network.h"
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

TEST(CompileNetworkErrors, UnboundSymbolicDimIsListed) {
  std::string msg = compile_error(conv_bn_relu_pool_gemm_softmax());
  EXPECT_NE(msg.find("batch"), std::string::npos) << msg;
}

TEST(CompileNetworkErrors, MalformedFile) {
  std::string msg = compile_error("this is not an onnx protobuf");
  EXPECT_NE(msg.find("net.onnx"), std::string::npos) << msg;
}

TEST(CompileNetworkErrors, AsymmetricPadsAreRefused) {
  graph::test::ModelBuilder b(13);
  b.input("x", graph::DataType::f32(), {1, 2, 6, 6});
  b.initializer("w", graph::test::random_tensor({2, 2, 3, 3}, 1));
  auto& n = b.node("Conv", {"x", "w"}, {"y"}, "odd_conv");
  graph::test::attr_ints(n, "pads", {0, 0, 1, 1});
  b.output("y");
  std::string msg = compile_error(b.bytes());
  EXPECT_NE(msg.find("odd_conv"), std::string::npos) << msg;
  EXPECT_NE(msg.find("asymmetric"), std::string::npos) << msg;
}

TEST(CompileNetworkErrors, UncompilableFormsOfSupportedOpsNameTheReason) {
  struct Case {
    const char* op;
    std::vector<int64_t> indices;  // Gather's constant indices; empty: a Slice with step -1
    const char* reason;
  };
  for (const Case& c : {Case{"Gather", {3, 0}, "step evenly"}, Case{"Slice", {}, "positive steps"}}) {
    graph::test::ModelBuilder b(13);
    b.input("x", graph::DataType::f32(), {4, 6});
    if (std::string(c.op) == "Gather") {
      b.initializer("i", graph::HostTensor::i64_vector(c.indices));
      b.node("Gather", {"x", "i"}, {"y"}, "odd_gather");
    } else {
      b.initializer("s", graph::HostTensor::i64_vector({3}));
      b.initializer("e", graph::HostTensor::i64_vector({0}));
      b.initializer("a", graph::HostTensor::i64_vector({1}));
      b.initializer("t", graph::HostTensor::i64_vector({-1}));
      b.node("Slice", {"x", "s", "e", "a", "t"}, {"y"}, "odd_slice");
    }
    b.output("y");
    std::string msg = compile_error(b.bytes());
    EXPECT_NE(msg.find(c.op), std::string::npos) << msg;
    EXPECT_NE(msg.find(c.reason), std::string::npos) << msg;
  }
}

}  // namespace
}  // namespace kiln::network::test
