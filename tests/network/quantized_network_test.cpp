// Quantized models on the dequantized path: a QDQ model (ONNX Runtime's quantize_static
// form) compiles, its weights' DequantizeLinear folded to float constants and its quantized
// activations written as exact float steps (compiler/graph/rewrites/quantize_dequantize.h),
// and model.so matches the reference evaluator, which runs the original Quantize and
// Dequantize nodes as ONNX defines them. Integer kernels are not used yet.
#include <gtest/gtest.h>

#include "compiler/base/error.h"
#include "tests/network/network_check.h"
#include "tests/network/test_models.h"
#include "tests/test_util.h"

namespace kiln::network::test {
namespace {

using graph::DataType;
using graph::HostTensor;
using graph::test::attr_int;
using graph::test::attr_ints;
using graph::test::f32_tensor;
using graph::test::ModelBuilder;

// x -> Q -> DQ -> Conv(DQ(int8 weights, per output channel), DQ(int32 bias)) -> Relu, as
// quantize_static writes a convolution whose output stays float.
std::string qdq_conv_model() {
  const int64_t C = 3, O = 4;
  ModelBuilder b(13);
  b.input("x", DataType::f32(), {int64_t{1}, C, int64_t{8}, int64_t{8}});
  b.initializer("x_scale", f32_tensor({}, {0.02}));
  b.initializer("x_zero", HostTensor::from_i64(DataType::u8(), {}, {128}));
  b.node("QuantizeLinear", {"x", "x_scale", "x_zero"}, {"xq"});
  b.node("DequantizeLinear", {"xq", "x_scale", "x_zero"}, {"xd"});
  std::vector<int64_t> w;
  for (int64_t i = 0; i < O * C * 9; ++i) w.push_back((i * 37) % 255 - 127);
  b.initializer("w", HostTensor::from_i64(DataType::i8(), {O, C, 3, 3}, w));
  const std::vector<double> w_scale = {0.01, 0.004, 0.02, 0.0075};
  b.initializer("w_scale", f32_tensor({O}, w_scale));
  b.initializer("w_zero", HostTensor::from_i64(DataType::i8(), {O}, {0, 0, 0, 0}));
  attr_int(b.node("DequantizeLinear", {"w", "w_scale", "w_zero"}, {"wd"}), "axis", 0);
  std::vector<double> bias_scale;
  for (double s : w_scale) bias_scale.push_back(0.02 * s);
  b.initializer("bias", HostTensor::from_i64(DataType::i32(), {O}, {300, -120, 45, 0}));
  b.initializer("bias_scale", f32_tensor({O}, bias_scale));
  attr_int(b.node("DequantizeLinear", {"bias", "bias_scale"}, {"bd"}), "axis", 0);
  auto& conv = b.node("Conv", {"xd", "wd", "bd"}, {"conv"});
  attr_ints(conv, "kernel_shape", {3, 3});
  attr_ints(conv, "pads", {1, 1, 1, 1});
  b.node("Relu", {"conv"}, {"y"});
  b.output("y");
  return b.bytes();
}

TEST(QuantizedNetworks, QdqConvMatchesTheReferenceOnTheHost) {
  // Inputs in [-3, 3): wider than scale 0.02 around 128 holds ([-2.56, 2.54]), so some
  // saturate at either end.
  expect_host_matches_reference(qdq_conv_model(), {},
                                {{"x", graph::test::random_tensor({1, 3, 8, 8}, 5, 3.0f)}});
}

TEST(QuantizedNetworks, AQuantizedGraphInputIsOneClearError) {
  // A model that takes uint8 and dequantizes it: refused at its input, one line, until the
  // integer path runs uint8 tensors.
  ModelBuilder b(13);
  b.input("q", DataType::u8(), {int64_t{1}, int64_t{4}});
  b.initializer("s", f32_tensor({}, {0.5}));
  b.initializer("z", HostTensor::from_i64(DataType::u8(), {}, {3}));
  b.node("DequantizeLinear", {"q", "s", "z"}, {"y"}, "dq");
  b.output("y");
  const std::string msg = kiln::test::user_error_of([&] { expect_host_matches_reference(b.bytes()); });
  EXPECT_NE(msg.find("value 'q' is u8"), std::string::npos) << msg;
  EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
}

}  // namespace
}  // namespace kiln::network::test
