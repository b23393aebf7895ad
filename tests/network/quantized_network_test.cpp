// Quantized models: a QDQ model (ONNX Runtime's quantize_static form) and a QOperator one
// compile and match the reference evaluator, which runs the original nodes as ONNX defines
// them.
//  - DequantizeLinear -> Conv / MatMul -> QuantizeLinear over 8-bit data and int8 weights
//    runs on the int8 kernels (conv2d.int8, dense.int8), the activation staying in 8 bits
//    between such layers (compiler/graph/rewrites/quantized_operators.h): within one quantum
//    of the float reference (the integer sums are exact where the float ones round).
//  - QLinearConv and QLinearMatMul map to the same kernels; QuantizeLinear and
//    DequantizeLinear of activations to quantize.flat and dequantize.flat: exact.
//  - What the int8 kernels do not take keeps the float path (a Conv whose output stays
//    float) or is one error naming the node (a QLinearConv with uint8 weights).
//  - A conv whose int8 kernel would be slower than f32 on the target (network/int8_choice.h)
//    keeps its float path too, and the compile says so.
#include <gtest/gtest.h>

#include <fstream>

#include "compiler/base/error.h"
#include "network/prepare_graph.h"
#include "runtime/process/temp_dir.h"
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

TEST(QuantizedNetworks, QdqConvChainRunsOnInt8KernelsWithinOneQuantum) {
  const CompileReport r = expect_host_matches_reference(
      qdq_chain_model(), {}, {{"x", graph::test::random_tensor({1, 8, 10, 10}, 5, 3.0f)}}, {},
      0.0801);  // one quantum of the last output scale
  const std::vector<std::string> ops = layer_ops(r);
  EXPECT_EQ(count(ops, "QLinearConv"), 2);
  EXPECT_EQ(count(ops, "QuantizeLinear"), 1);    // the model's input, once
  EXPECT_EQ(count(ops, "DequantizeLinear"), 1);  // its output, once
  EXPECT_EQ(count(ops, "Conv"), 0);
}

// The QOperator form of one layer: QuantizeLinear -> QLinearConv -> DequantizeLinear, and a
// QLinearMatMul on a flattened activation. The reference evaluator computes exactly what the
// kernels do (int32 sums, f32 requantization): equal outputs.
std::string qoperator_model(DataType data_type) {
  const bool s8 = data_type == DataType::i8();
  ModelBuilder b(13);
  b.input("x", DataType::f32(), {int64_t{1}, int64_t{4}, int64_t{6}, int64_t{6}});
  b.initializer("sx", f32_tensor({}, {0.03}));
  b.initializer("zx", HostTensor::from_i64(data_type, {}, {s8 ? -4 : 120}));
  b.node("QuantizeLinear", {"x", "sx", "zx"}, {"xq"});
  std::vector<int64_t> w;
  for (int64_t i = 0; i < 6 * 4 * 9; ++i) w.push_back((i * 29) % 255 - 127);
  b.initializer("w", HostTensor::from_i64(DataType::i8(), {6, 4, 3, 3}, w));
  b.initializer("sw", f32_tensor({}, {0.004}));
  b.initializer("zw", HostTensor::from_i64(DataType::i8(), {}, {0}));
  b.initializer("sy", f32_tensor({}, {0.07}));
  b.initializer("zy", HostTensor::from_i64(data_type, {}, {s8 ? 3 : 90}));
  b.initializer("bias", HostTensor::from_i64(DataType::i32(), {6}, {10, -300, 0, 77, 5000, -1}));
  auto& conv =
      b.node("QLinearConv", {"xq", "sx", "zx", "w", "sw", "zw", "sy", "zy", "bias"}, {"yq"});
  attr_ints(conv, "pads", {1, 1, 1, 1});
  attr_ints(conv, "strides", {2, 2});
  b.node("DequantizeLinear", {"yq", "sy", "zy"}, {"y"});
  b.output("y");
  return b.bytes();
}

// One quantized layer (C -> O channels, K x K, same padding, `group` groups; int8 weights per
// output channel, an int32 bias) between a QuantizeLinear of the input and a DequantizeLinear of
// the output, in either form ONNX Runtime's quantizer writes:
//   QDQ:       Q -> DQ -> Conv(DQ(w), DQ(bias)) -> Q -> DQ   (the Conv is named "the_conv")
//   QOperator: Q -> QLinearConv(w, bias) -> DQ               (the QLinearConv is)
enum class Form { Qdq, QOperator };
std::string quantized_layer_model(Form form, int64_t C, int64_t O, int64_t H, int64_t K,
                                  int64_t group = 1) {
  ModelBuilder b(13);
  b.input("x", DataType::f32(), {int64_t{1}, C, H, H});
  b.initializer("sx", f32_tensor({}, {0.02}));
  b.initializer("zx", HostTensor::from_i64(DataType::u8(), {}, {128}));
  b.node("QuantizeLinear", {"x", "sx", "zx"}, {"xq"});
  std::vector<int64_t> w, bias;
  for (int64_t i = 0; i < O * C / group * K * K; ++i) w.push_back((i * 37) % 255 - 127);
  std::vector<double> ws, bs;  // the bias is in units of sx * ws, as quantize_static writes it
  for (int64_t o = 0; o < O; ++o) {
    ws.push_back(0.0005 * double(1 + o % 3));
    bs.push_back(0.02 * ws.back());
    bias.push_back((o * 97) % 401 - 200);
  }
  b.initializer("w", HostTensor::from_i64(DataType::i8(), {O, C / group, K, K}, w));
  b.initializer("ws", f32_tensor({O}, ws));
  b.initializer("b", HostTensor::from_i64(DataType::i32(), {O}, bias));
  b.initializer("sy", f32_tensor({}, {0.1}));
  b.initializer("zy", HostTensor::from_i64(DataType::u8(), {}, {100}));
  onnx::NodeProto* conv = nullptr;
  if (form == Form::Qdq) {
    b.node("DequantizeLinear", {"xq", "sx", "zx"}, {"xd"});
    attr_int(b.node("DequantizeLinear", {"w", "ws"}, {"wd"}), "axis", 0);
    b.initializer("bs", f32_tensor({O}, bs));
    attr_int(b.node("DequantizeLinear", {"b", "bs"}, {"bd"}), "axis", 0);
    conv = &b.node("Conv", {"xd", "wd", "bd"}, {"c"}, "the_conv");
    b.node("QuantizeLinear", {"c", "sy", "zy"}, {"yq"});
  } else {
    b.initializer("zw", HostTensor::from_i64(DataType::i8(), {O}, std::vector<int64_t>(O, 0)));
    conv = &b.node("QLinearConv", {"xq", "sx", "zx", "w", "ws", "zw", "sy", "zy", "b"}, {"yq"},
                   "the_conv");
  }
  attr_ints(*conv, "pads", {K / 2, K / 2, K / 2, K / 2});
  if (group != 1) attr_int(*conv, "group", group);
  b.node("DequantizeLinear", {"yq", "sy", "zy"}, {"y"});
  b.output("y");
  return b.bytes();
}

// The graph prepared for `target`: its QLinearConv count and the convs kept in float.
struct Choice {
  int qlinear = 0;
  std::vector<KeptFloat> kept;
};
Choice int8_choice(const std::string& bytes, const std::string& target) {
  TempDir dir("kiln-int8-choice");
  const std::string onnx = dir.file("net.onnx");
  std::ofstream(onnx, std::ios::binary) << bytes;
  PreparedGraph p = prepare_graph(onnx, {}, target_from_name(target), {});
  Choice c;
  for (const graph::Node& n : p.graph.nodes) c.qlinear += n.op_type == "QLinearConv";
  c.kept = p.int8_kept_float;
  return c;
}

TEST(QuantizedNetworks, ConvsWhoseInt8KernelIsSlowerKeepTheirFloatPath) {
  // A 3x3 stride-1 conv that the f32 network runs by Winograd: on AVX2 (no dot-product
  // instruction) int8 multiplies at f32's rate and loses; with AVX512-VNNI (x86-amx always
  // has it) it takes the int8 kernel. A 1x1 conv takes it on both.
  const std::string winograd_form = quantized_layer_model(Form::Qdq, 32, 32, 28, 3);
  Choice avx2 = int8_choice(winograd_form, "x86-avx2");
  EXPECT_EQ(avx2.qlinear, 0);
  ASSERT_EQ(avx2.kept.size(), 1u);
  EXPECT_EQ(avx2.kept[0].node, "the_conv");
  EXPECT_NE(avx2.kept[0].reason.find("Winograd"), std::string::npos) << avx2.kept[0].reason;
  Choice vnni = int8_choice(winograd_form, "x86-amx");
  EXPECT_EQ(vnni.qlinear, 1);
  EXPECT_TRUE(vnni.kept.empty());
  const std::string pointwise = quantized_layer_model(Form::Qdq, 32, 32, 28, 1);
  EXPECT_EQ(int8_choice(pointwise, "x86-avx2").qlinear, 1);
  EXPECT_TRUE(int8_choice(pointwise, "x86-avx2").kept.empty());
  // Three input channels (an image's first layer): the int8 kernel's channel pairs pad them.
  Choice rgb = int8_choice(quantized_layer_model(Form::Qdq, 3, 16, 16, 3), "x86-avx2");
  ASSERT_EQ(rgb.kept.size(), 1u);
  EXPECT_NE(rgb.kept[0].reason.find("3 input channels"), std::string::npos);

  // The QOperator form of the same layer takes the same paths.
  const std::string qlinear = quantized_layer_model(Form::QOperator, 32, 32, 28, 3);
  Choice q_avx2 = int8_choice(qlinear, "x86-avx2");
  EXPECT_EQ(q_avx2.qlinear, 0);
  ASSERT_EQ(q_avx2.kept.size(), 1u);
  EXPECT_EQ(q_avx2.kept[0].node, "the_conv");
  EXPECT_EQ(int8_choice(qlinear, "x86-amx").qlinear, 1);
  expect_host_matches_reference(
      qlinear, {}, {{"x", graph::test::random_tensor({1, 32, 28, 28}, 13, 2.5f)}}, {}, 0.1001);

  // Whichever path the host takes, the result is within one quantum of the QDQ graph's own
  // float semantics, and the compile report names what it kept in float.
  const CompileReport r = expect_host_matches_reference(
      winograd_form, {}, {{"x", graph::test::random_tensor({1, 32, 28, 28}, 11, 2.5f)}}, {},
      0.1001);
  if (!r.int8_kept_float.empty())
    EXPECT_NE(format_report(r).find("1 quantized convs kept in f32"), std::string::npos);
}

TEST(QuantizedNetworks, DepthwiseConvsRunOnTheInt8DepthwiseKernel) {
  // MobileNet's depthwise layer in both forms: one QLinearConv (conv2d.int8.depthwise), nothing
  // kept in float, on any target; within one quantum of the QDQ graph's float semantics.
  for (Form form : {Form::Qdq, Form::QOperator}) {
    SCOPED_TRACE(form == Form::Qdq ? "QDQ" : "QOperator");
    const std::string model = quantized_layer_model(form, 24, 24, 14, 3, 24);
    const Choice avx2 = int8_choice(model, "x86-avx2");
    EXPECT_EQ(avx2.qlinear, 1);
    EXPECT_TRUE(avx2.kept.empty());
    const CompileReport r = expect_host_matches_reference(
        model, {}, {{"x", graph::test::random_tensor({1, 24, 14, 14}, 17, 2.5f)}}, {}, 0.1001);
    EXPECT_EQ(count(layer_ops(r), "QLinearConv"), 1);
  }
  // A grouped conv that is not depthwise keeps its float path (QDQ) or is one error naming the
  // node (QOperator, which has no float path).
  EXPECT_EQ(int8_choice(quantized_layer_model(Form::Qdq, 16, 16, 8, 3, 4), "x86-avx2").qlinear, 0);
  const std::string msg = kiln::test::user_error_of([&] {
    expect_host_matches_reference(quantized_layer_model(Form::QOperator, 16, 16, 8, 3, 4));
  });
  EXPECT_NE(msg.find("the_conv"), std::string::npos) << msg;
  EXPECT_NE(msg.find("depthwise"), std::string::npos) << msg;
}

TEST(QuantizedNetworks, QOperatorConvMatchesExactly) {
  for (DataType t : {DataType::u8(), DataType::i8()}) {
    SCOPED_TRACE(t.str());
    const CompileReport r = expect_host_matches_reference(
        qoperator_model(t), {}, {{"x", graph::test::random_tensor({1, 4, 6, 6}, 9, 4.0f)}});
    EXPECT_EQ(count(layer_ops(r), "QLinearConv"), 1);
  }
}

// A residual block of a quantized ResNet, in either form: a conv, a 3x3 max pool (stride 1,
// so that its output adds to the block's input) and the residual Add with its Relu.
//   QDQ:       Q(x) -> DQ -> Conv -> Q -> DQ -> MaxPool -> Q -> DQ --+-> Add -> Relu -> Q -> DQ
//              Q(x) -> DQ -------------------------------------------+
//   QOperator: Q(x) -> QLinearConv -> MaxPool (uint8) -> QLinearAdd(., Q(x)) -> DQ
// C = 20 channels: the 8-bit blocks hold padded channels, which carry the zero points.
std::string residual_block_model(Form form) {
  const int64_t C = 20, H = 9;
  ModelBuilder b(13);
  b.input("x", DataType::f32(), {int64_t{1}, C, H, H});
  b.initializer("sx", f32_tensor({}, {0.03}));
  b.initializer("zx", HostTensor::from_i64(DataType::u8(), {}, {120}));
  b.node("QuantizeLinear", {"x", "sx", "zx"}, {"xq"});
  std::vector<int64_t> w, bias;
  for (int64_t i = 0; i < C * C * 9; ++i) w.push_back((i * 41) % 255 - 127);
  for (int64_t o = 0; o < C; ++o) bias.push_back((o * 89) % 301 - 150);
  b.initializer("w", HostTensor::from_i64(DataType::i8(), {C, C, 3, 3}, w));
  b.initializer("ws", f32_tensor({}, {0.0007}));
  b.initializer("b", HostTensor::from_i64(DataType::i32(), {C}, bias));
  b.initializer("s1", f32_tensor({}, {0.05}));
  b.initializer("z1", HostTensor::from_i64(DataType::u8(), {}, {110}));
  b.initializer("s3", f32_tensor({}, {0.1}));
  b.initializer("z3", HostTensor::from_i64(DataType::u8(), {}, {0}));
  onnx::NodeProto* conv = nullptr;
  onnx::NodeProto* pool = nullptr;
  if (form == Form::Qdq) {
    b.node("DequantizeLinear", {"xq", "sx", "zx"}, {"xd"});
    b.node("DequantizeLinear", {"w", "ws"}, {"wd"});
    b.initializer("bs", f32_tensor({}, {0.03 * 0.0007}));
    b.node("DequantizeLinear", {"b", "bs"}, {"bd"});
    conv = &b.node("Conv", {"xd", "wd", "bd"}, {"c"});
    b.node("QuantizeLinear", {"c", "s1", "z1"}, {"q1"});
    b.node("DequantizeLinear", {"q1", "s1", "z1"}, {"d1"});
    pool = &b.node("MaxPool", {"d1"}, {"m"});
    b.node("QuantizeLinear", {"m", "s1", "z1"}, {"q2"});
    b.node("DequantizeLinear", {"q2", "s1", "z1"}, {"d2"});
    b.node("Add", {"d2", "xd"}, {"a"});
    b.node("Relu", {"a"}, {"r"});
    b.node("QuantizeLinear", {"r", "s3", "z3"}, {"q3"});
  } else {
    b.initializer("zw", HostTensor::from_i64(DataType::i8(), {}, {0}));
    conv = &b.node("QLinearConv", {"xq", "sx", "zx", "w", "ws", "zw", "s1", "z1", "b"}, {"q1"});
    pool = &b.node("MaxPool", {"q1"}, {"q2"});
    b.node("QLinearAdd", {"q2", "s1", "z1", "xq", "sx", "zx", "s3", "z3"}, {"q3"})
        .set_domain("com.microsoft");
  }
  attr_ints(*conv, "pads", {1, 1, 1, 1});
  attr_ints(*pool, "kernel_shape", {3, 3});
  attr_ints(*pool, "pads", {1, 1, 1, 1});
  b.node("DequantizeLinear", {"q3", "s3", "z3"}, {"y"});
  b.output("y");
  return b.bytes();
}

TEST(QuantizedNetworks, ResidualBlockStaysInEightBitsThroughMaxPoolAndAdd) {
  for (Form form : {Form::Qdq, Form::QOperator}) {
    SCOPED_TRACE(form == Form::Qdq ? "QDQ" : "QOperator");
    // QOperator: the reference runs the same integer operators, exactly. QDQ: its float conv
    // may round one quantum of s1 away from the integer one, which the Add carries into y
    // (s1 = 0.05, s3 = 0.1): within one quantum of s3 and a rounding.
    const CompileReport r = expect_host_matches_reference(
        residual_block_model(form), {}, {{"x", graph::test::random_tensor({1, 20, 9, 9}, 4, 3.0f)}},
        {}, form == Form::Qdq ? 0.1001 : 1e-6);
    const std::vector<std::string> ops = layer_ops(r);
    EXPECT_EQ(count(ops, "QLinearConv"), 1);
    EXPECT_EQ(count(ops, "MaxPool"), 1);
    EXPECT_EQ(count(ops, "QLinearAdd"), 1);
    EXPECT_EQ(count(ops, "Add"), 0);
    EXPECT_EQ(count(ops, "QuantizeLinear"), 1);    // the model's input
    EXPECT_EQ(count(ops, "DequantizeLinear"), 1);  // its output
  }
}

TEST(QuantizedNetworks, ResidualBlockMatchesExactlyOnArmNeon) {
  const std::string skip = expect_arm_neon_matches_reference(residual_block_model(Form::QOperator));
  if (!skip.empty()) GTEST_SKIP() << skip;
}

// Q(x) -> DQ -> Flatten -> Q -> DQ -> MatMul(DQ(int8 w)) -> Q -> DQ, as quantize_static
// writes a classifier's input: the Flatten moves the 8-bit values as they are, between the
// model's QuantizeLinear and the QLinearMatMul, with no float step.
TEST(QuantizedNetworks, AQdqFlattenMovesTheEightBitValues) {
  ModelBuilder b(13);
  b.input("x", DataType::f32(), {int64_t{2}, int64_t{3}, int64_t{2}, int64_t{2}});
  b.initializer("sx", f32_tensor({}, {0.02}));
  b.initializer("zx", HostTensor::from_i64(DataType::u8(), {}, {128}));
  b.node("QuantizeLinear", {"x", "sx", "zx"}, {"xq"});
  b.node("DequantizeLinear", {"xq", "sx", "zx"}, {"xd"});
  b.node("Flatten", {"xd"}, {"f"});
  b.node("QuantizeLinear", {"f", "sx", "zx"}, {"fq"});
  b.node("DequantizeLinear", {"fq", "sx", "zx"}, {"fd"});
  std::vector<int64_t> w;
  for (int64_t i = 0; i < 12 * 5; ++i) w.push_back((i * 53) % 255 - 127);
  b.initializer("w", HostTensor::from_i64(DataType::i8(), {12, 5}, w));
  b.initializer("sw", f32_tensor({}, {0.004}));
  b.node("DequantizeLinear", {"w", "sw"}, {"wd"});
  b.node("MatMul", {"fd", "wd"}, {"m"});
  b.initializer("sy", f32_tensor({}, {0.05}));
  b.initializer("zy", HostTensor::from_i64(DataType::u8(), {}, {120}));
  b.node("QuantizeLinear", {"m", "sy", "zy"}, {"yq"});
  b.node("DequantizeLinear", {"yq", "sy", "zy"}, {"y"});
  b.output("y");
  const CompileReport r = expect_host_matches_reference(
      b.bytes(), {}, {{"x", graph::test::random_tensor({2, 3, 2, 2}, 6, 3.0f)}}, {}, 0.0501);
  const std::vector<std::string> ops = layer_ops(r);
  EXPECT_EQ(count(ops, "Flatten"), 1);
  EXPECT_EQ(count(ops, "QLinearMatMul"), 1);
  EXPECT_EQ(count(ops, "QuantizeLinear"), 1);
  EXPECT_EQ(count(ops, "DequantizeLinear"), 1);
}

// ONNX Runtime's com.microsoft quantized operators as its quantize_static writes them in the
// QOperator form, each expanded to DequantizeLinear -> float op -> QuantizeLinear (the graph
// rewrite quantized_contrib) around the QLinearConv, which keeps its integer kernel:
//   Q(x) -> QLinearConv -> QLinearSigmoid, QLinearLeakyRelu -> QLinearMul -> QLinearConcat
//   (with the conv) -> QLinearAveragePool -> QLinearAdd (broadcast with its own global pool)
//   -> QLinearGlobalAveragePool -> Flatten -> QGemm (per-column weights, int32 bias) -> DQ
std::string contrib_ops_model() {
  ModelBuilder b(13);
  b.input("x", DataType::f32(), {int64_t{1}, int64_t{8}, int64_t{6}, int64_t{6}});
  auto q8 = [&](const std::string& name, double scale, int64_t zero) {
    b.initializer("s_" + name, f32_tensor({}, {scale}));
    b.initializer("z_" + name, HostTensor::from_i64(DataType::u8(), {}, {zero}));
  };
  auto ms = [&](onnx::NodeProto& n) -> onnx::NodeProto& {
    n.set_domain("com.microsoft");
    return n;
  };
  q8("x", 0.03, 128);
  b.node("QuantizeLinear", {"x", "s_x", "z_x"}, {"xq"});
  std::vector<int64_t> w;
  for (int64_t i = 0; i < 8 * 8 * 9; ++i) w.push_back((i * 41) % 255 - 127);
  b.initializer("w", HostTensor::from_i64(DataType::i8(), {8, 8, 3, 3}, w));
  b.initializer("ws", f32_tensor({}, {0.002}));
  b.initializer("wz", HostTensor::from_i64(DataType::i8(), {}, {0}));
  q8("c", 0.05, 120);
  attr_ints(b.node("QLinearConv", {"xq", "s_x", "z_x", "w", "ws", "wz", "s_c", "z_c"}, {"c"}),
            "pads", {1, 1, 1, 1});
  q8("sig", 1.0 / 256, 0);
  ms(b.node("QLinearSigmoid", {"c", "s_c", "z_c", "s_sig", "z_sig"}, {"sig"}));
  q8("lr", 0.04, 30);
  graph::test::attr_float(
      ms(b.node("QLinearLeakyRelu", {"c", "s_c", "z_c", "s_lr", "z_lr"}, {"lr"})), "alpha", 0.1f);
  q8("mul", 0.03, 40);
  ms(b.node("QLinearMul", {"sig", "s_sig", "z_sig", "lr", "s_lr", "z_lr", "s_mul", "z_mul"},
            {"mul"}));
  q8("cat", 0.05, 100);
  attr_int(ms(b.node("QLinearConcat",
                     {"s_cat", "z_cat", "mul", "s_mul", "z_mul", "c", "s_c", "z_c"}, {"cat"})),
           "axis", 1);
  q8("ap", 0.05, 100);
  auto& ap = ms(b.node("QLinearAveragePool", {"cat", "s_cat", "z_cat", "s_ap", "z_ap"}, {"ap"}));
  attr_ints(ap, "kernel_shape", {2, 2});
  attr_ints(ap, "strides", {2, 2});
  q8("g", 0.05, 100);
  ms(b.node("QLinearGlobalAveragePool", {"ap", "s_ap", "z_ap", "s_g", "z_g"}, {"g"}));
  q8("sum", 0.08, 90);
  ms(b.node("QLinearAdd", {"ap", "s_ap", "z_ap", "g", "s_g", "z_g", "s_sum", "z_sum"}, {"sum"}));
  q8("pool", 0.08, 90);
  ms(b.node("QLinearGlobalAveragePool", {"sum", "s_sum", "z_sum", "s_pool", "z_pool"}, {"pool"}));
  b.node("Flatten", {"pool"}, {"f"});
  std::vector<int64_t> g;
  std::vector<double> gs;
  for (int64_t i = 0; i < 10 * 16; ++i) g.push_back((i * 29) % 255 - 127);
  for (int64_t o = 0; o < 10; ++o) gs.push_back(0.001 * double(1 + o % 4));
  b.initializer("g_w", HostTensor::from_i64(DataType::i8(), {10, 16}, g));
  b.initializer("g_s", f32_tensor({10}, gs));
  b.initializer("g_z", HostTensor::from_i64(DataType::i8(), {10}, std::vector<int64_t>(10, 0)));
  b.initializer(
      "g_b", HostTensor::from_i64(DataType::i32(), {10}, {100, -50, 0, 7, 300, -2, 1, 9, -99, 40}));
  q8("y", 0.02, 128);
  attr_int(ms(b.node("QGemm", {"f", "s_pool", "z_pool", "g_w", "g_s", "g_z", "g_b", "s_y", "z_y"},
                     {"yq"})),
           "transB", 1);
  b.node("DequantizeLinear", {"yq", "s_y", "z_y"}, {"y"});
  b.output("y");
  return b.bytes();
}

TEST(QuantizedNetworks, OnnxRuntimeContribOperatorsCompileAsTheirQdqForm) {
  // The kernels' f32 sums may round an intermediate value one quantum from the reference's
  // double ones: within two quanta of the output scale.
  const CompileReport r = expect_host_matches_reference(
      contrib_ops_model(), {}, {{"x", graph::test::random_tensor({1, 8, 6, 6}, 8, 3.0f)}}, {},
      0.0401);
  const std::vector<std::string> ops = layer_ops(r);
  EXPECT_EQ(count(ops, "QLinearConv"), 1);
  EXPECT_EQ(count(ops, "QGemm"), 1);  // on the int8 dense kernel
  for (const char* op : {"QLinearSigmoid", "QLinearLeakyRelu", "QLinearMul", "QLinearConcat",
                         "QLinearAveragePool", "QLinearAdd", "QLinearGlobalAveragePool", "Gemm"})
    EXPECT_EQ(count(ops, op), 0) << op;
  EXPECT_EQ(count(ops, "Sigmoid"), 1);
}

// Q(x) -> DQ -> Gemm(DQ(int8 w [N, K], per row), DQ(int32 bias)) -> Q -> DQ, as
// quantize_static writes a classifier: one QGemm on the int8 dense kernel, B transposed to
// [K, N] at compile time.
TEST(QuantizedNetworks, AQdqGemmRunsOnTheInt8DenseKernel) {
  ModelBuilder b(13);
  b.input("x", DataType::f32(), {int64_t{3}, int64_t{20}});
  b.initializer("sx", f32_tensor({}, {0.02}));
  b.initializer("zx", HostTensor::from_i64(DataType::u8(), {}, {128}));
  b.node("QuantizeLinear", {"x", "sx", "zx"}, {"xq"});
  b.node("DequantizeLinear", {"xq", "sx", "zx"}, {"xd"});
  std::vector<int64_t> w, bias;
  std::vector<double> ws, bs;
  for (int64_t i = 0; i < 7 * 20; ++i) w.push_back((i * 71) % 255 - 127);
  for (int64_t o = 0; o < 7; ++o) {
    ws.push_back(0.002 * double(1 + o % 3));
    bs.push_back(0.02 * ws.back());
    bias.push_back((o * 97) % 401 - 200);
  }
  b.initializer("w", HostTensor::from_i64(DataType::i8(), {7, 20}, w));
  b.initializer("ws", f32_tensor({7}, ws));
  attr_int(b.node("DequantizeLinear", {"w", "ws"}, {"wd"}), "axis", 0);
  b.initializer("b", HostTensor::from_i64(DataType::i32(), {7}, bias));
  b.initializer("bs", f32_tensor({7}, bs));
  attr_int(b.node("DequantizeLinear", {"b", "bs"}, {"bd"}), "axis", 0);
  attr_int(b.node("Gemm", {"xd", "wd", "bd"}, {"g"}), "transB", 1);
  b.initializer("sy", f32_tensor({}, {0.05}));
  b.initializer("zy", HostTensor::from_i64(DataType::u8(), {}, {120}));
  b.node("QuantizeLinear", {"g", "sy", "zy"}, {"yq"});
  b.node("DequantizeLinear", {"yq", "sy", "zy"}, {"y"});
  b.output("y");
  const CompileReport r = expect_host_matches_reference(
      b.bytes(), {}, {{"x", graph::test::random_tensor({3, 20}, 2, 2.0f)}}, {}, 0.0501);
  const std::vector<std::string> ops = layer_ops(r);
  EXPECT_EQ(count(ops, "QGemm"), 1);
  EXPECT_EQ(count(ops, "Gemm"), 0);
}

TEST(QuantizedNetworks, QLinearMatMulMatchesExactly) {
  ModelBuilder b(13);
  b.input("x", DataType::f32(), {int64_t{3}, int64_t{20}});
  b.initializer("sa", f32_tensor({}, {0.01}));
  b.initializer("za", HostTensor::from_i64(DataType::u8(), {}, {130}));
  b.node("QuantizeLinear", {"x", "sa", "za"}, {"aq"});
  std::vector<int64_t> w;
  for (int64_t i = 0; i < 20 * 9; ++i) w.push_back((i * 71) % 255 - 127);
  b.initializer("b", HostTensor::from_i64(DataType::i8(), {20, 9}, w));
  std::vector<double> sb;
  for (int i = 0; i < 9; ++i) sb.push_back(0.002 * (1 + i % 3));
  b.initializer("sb", f32_tensor({9}, sb));
  b.initializer("zb", HostTensor::from_i64(DataType::i8(), {9}, std::vector<int64_t>(9, 0)));
  b.initializer("sy", f32_tensor({}, {0.02}));
  b.initializer("zy", HostTensor::from_i64(DataType::u8(), {}, {128}));
  b.node("QLinearMatMul", {"aq", "sa", "za", "b", "sb", "zb", "sy", "zy"}, {"yq"});
  b.node("DequantizeLinear", {"yq", "sy", "zy"}, {"y"});
  b.output("y");
  const CompileReport r = expect_host_matches_reference(b.bytes());
  EXPECT_EQ(count(layer_ops(r), "QLinearMatMul"), 1);
}

TEST(QuantizedNetworks, AQLinearConvWithUint8WeightsRunsInFloat) {
  // The int8 kernels take int8 weights only: with uint8 weights (ONNX allows them) the node
  // takes the float path on every target, VNNI or not, and the report names it and why.
  ModelBuilder b(13);
  b.input("x", DataType::f32(), {int64_t{1}, int64_t{4}, int64_t{4}, int64_t{4}});
  b.initializer("s", f32_tensor({}, {0.1}));
  b.initializer("z", HostTensor::from_i64(DataType::u8(), {}, {128}));
  b.node("QuantizeLinear", {"x", "s", "z"}, {"xq"});
  b.initializer("w", HostTensor::from_i64(DataType::u8(), {2, 4, 1, 1}, {1, 2, 3, 4, 5, 6, 7, 8}));
  b.node("QLinearConv", {"xq", "s", "z", "w", "s", "z", "s", "z"}, {"yq"}, "uint8_weights");
  b.node("DequantizeLinear", {"yq", "s", "z"}, {"y"});
  b.output("y");
  for (const char* target : {"x86-avx2", "x86-amx", "cortex-a76"}) {
    const Choice c = int8_choice(b.bytes(), target);
    EXPECT_EQ(c.qlinear, 0) << target;
    ASSERT_EQ(c.kept.size(), 1u) << target;
    EXPECT_EQ(c.kept[0].node, "uint8_weights");
    EXPECT_NE(c.kept[0].reason.find("uint8 weights"), std::string::npos) << c.kept[0].reason;
  }
  const CompileReport r = expect_host_matches_reference(
      b.bytes(), {}, {{"x", graph::test::random_tensor({1, 4, 4, 4}, 5, 2.0f)}}, {}, 0.1001);
  EXPECT_EQ(r.int8_kept_float.size(), 1u);
}

TEST(QuantizedNetworks, AQuantizedGraphInputIsOneClearError) {
  // A model that takes uint8 and dequantizes it: refused at its input, one line (model inputs
  // and outputs are f32, int32, int64 or bool).
  ModelBuilder b(13);
  b.input("q", DataType::u8(), {int64_t{1}, int64_t{4}});
  b.initializer("s", f32_tensor({}, {0.5}));
  b.initializer("z", HostTensor::from_i64(DataType::u8(), {}, {3}));
  b.node("DequantizeLinear", {"q", "s", "z"}, {"y"}, "dq");
  b.output("y");
  const std::string msg =
      kiln::test::user_error_of([&] { expect_host_matches_reference(b.bytes()); });
  EXPECT_NE(msg.find("graph input 'q' is u8"), std::string::npos) << msg;
  EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
}

}  // namespace
}  // namespace kiln::network::test
