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
  b.node("Erf", {"x"}, {"y"}, "my_erf");
  b.output("y");
  std::string msg = compile_error(b.bytes());
  EXPECT_NE(msg.find("my_erf"), std::string::npos) << msg;
  EXPECT_NE(msg.find("Erf"), std::string::npos) << msg;
  EXPECT_NE(msg.find("not supported"), std::string::npos) << msg;
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

}  // namespace
}  // namespace kiln::network::test
