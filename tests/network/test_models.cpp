#include "tests/network/test_models.h"

#include <cstdlib>
#include <filesystem>

namespace kiln::network::test {

// Every network test compiles with the graph verifier after each graph rewrite (as the kernel
// tests lower with KILN_VERIFY_IR): a rewrite that breaks the graph fails where it happens.
[[maybe_unused]] const bool kVerifyEveryRewrite = setenv("KILN_VERIFY_GRAPH", "1", 0) == 0;

using graph::test::attr_float;
using graph::test::attr_int;
using graph::test::attr_ints;
using graph::test::ModelBuilder;
using graph::test::random_tensor;

namespace {

void conv(ModelBuilder& b, const std::string& x, const std::string& y, int64_t c, int64_t o,
          int64_t k, int64_t stride, int64_t group, uint32_t seed, bool bias) {
  b.initializer(y + ".w", random_tensor({o, c / group, k, k}, seed, 0.5f));
  std::vector<std::string> in = {x, y + ".w"};
  if (bias) {
    b.initializer(y + ".b", random_tensor({o}, seed + 1, 0.5f));
    in.push_back(y + ".b");
  }
  auto& n = b.node("Conv", in, {y}, y + "_conv");
  int64_t p = k / 2;
  attr_ints(n, "pads", {p, p, p, p});
  attr_ints(n, "strides", {stride, stride});
  attr_ints(n, "kernel_shape", {k, k});
  attr_int(n, "group", group);
}

void batch_norm(ModelBuilder& b, const std::string& x, const std::string& y, int64_t c,
                uint32_t seed) {
  b.initializer(y + ".g", random_tensor({c}, seed, 1.0f));
  b.initializer(y + ".beta", random_tensor({c}, seed + 1, 1.0f));
  b.initializer(y + ".m", random_tensor({c}, seed + 2, 0.5f));
  graph::HostTensor var = random_tensor({c}, seed + 3, 0.5f);
  for (int64_t i = 0; i < c; ++i) var.data<float>()[i] += 1.0f;  // positive variances
  b.initializer(y + ".v", var);
  auto& n = b.node("BatchNormalization", {x, y + ".g", y + ".beta", y + ".m", y + ".v"}, {y},
                   y + "_bn");
  attr_float(n, "epsilon", 1e-5f);
}

void clip6(ModelBuilder& b, const std::string& x, const std::string& y) {
  b.initializer(y + ".lo", graph::test::f32_tensor({}, {0.0}));
  b.initializer(y + ".hi", graph::test::f32_tensor({}, {6.0}));
  b.node("Clip", {x, y + ".lo", y + ".hi"}, {y}, y + "_clip");
}

}  // namespace

std::string conv_bn_relu_pool_gemm_softmax() {
  ModelBuilder b(13);
  b.input("image", graph::DataType::f32(), {std::string("batch"), 3, 16, 16});
  conv(b, "image", "c1", 3, 16, 3, 1, 1, 1, true);
  batch_norm(b, "c1", "bn1", 16, 10);
  b.node("Relu", {"bn1"}, {"r1"}, "relu1");
  auto& pool = b.node("MaxPool", {"r1"}, {"p1"}, "pool1");
  attr_ints(pool, "kernel_shape", {2, 2});
  attr_ints(pool, "strides", {2, 2});
  b.node("Flatten", {"p1"}, {"f1"}, "flatten");
  b.initializer("fc.w", random_tensor({10, 16 * 8 * 8}, 20, 0.05f));
  b.initializer("fc.b", random_tensor({10}, 21, 0.5f));
  auto& g = b.node("Gemm", {"f1", "fc.w", "fc.b"}, {"logits"}, "fc");
  attr_int(g, "transB", 1);
  b.node("Softmax", {"logits"}, {"prob"}, "softmax");
  b.output("prob");
  return b.bytes();
}

std::string residual_block() {
  ModelBuilder b(13);
  b.input("x", graph::DataType::f32(), {1, 16, 12, 12});
  conv(b, "x", "a", 16, 16, 3, 1, 1, 30, false);
  batch_norm(b, "a", "abn", 16, 31);
  b.node("Relu", {"abn"}, {"ar"}, "relu_a");
  conv(b, "ar", "c", 16, 16, 3, 1, 1, 40, false);
  batch_norm(b, "c", "cbn", 16, 41);
  b.node("Add", {"cbn", "x"}, {"sum"}, "residual_add");
  b.node("Relu", {"sum"}, {"y"}, "relu_out");
  b.node("GlobalAveragePool", {"y"}, {"gap"}, "gap");
  b.output("y");
  b.output("gap");
  return b.bytes();
}

std::string depthwise_pointwise_block() {
  ModelBuilder b(13);
  b.input("x", graph::DataType::f32(), {1, 8, 14, 14});
  conv(b, "x", "e", 8, 24, 1, 1, 1, 50, true);
  clip6(b, "e", "e6");
  conv(b, "e6", "d", 24, 24, 3, 2, 24, 60, true);
  batch_norm(b, "d", "dbn", 24, 61);
  clip6(b, "dbn", "d6");
  conv(b, "d6", "p", 24, 12, 1, 1, 1, 70, true);
  auto& pool = b.node("AveragePool", {"p"}, {"y"}, "avg");
  attr_ints(pool, "kernel_shape", {3, 3});
  attr_ints(pool, "strides", {1, 1});
  attr_ints(pool, "pads", {1, 1, 1, 1});
  b.output("y");
  return b.bytes();
}

std::string repeated_conv_chain() {
  ModelBuilder b(13);
  b.input("x", graph::DataType::f32(), {1, 16, 10, 10});
  std::string in = "x";
  for (int i = 0; i < 3; ++i) {
    const std::string c = "c" + std::to_string(i), r = "r" + std::to_string(i);
    conv(b, in, c, 16, 16, 3, 1, 1, 80 + 2 * i, true);
    b.node("Relu", {c}, {r}, r + "_relu");
    in = r;
  }
  b.output(in);
  return b.bytes();
}

std::string conv_chain_32() {
  ModelBuilder b(13);
  b.input("x", graph::DataType::f32(), {1, 32, 8, 8});
  const int64_t channels[] = {32, 32, 64, 64}, kernels[] = {3, 1, 3};
  std::string in = "x";
  for (int i = 0; i < 3; ++i) {
    const std::string c = "c" + std::to_string(i), r = "r" + std::to_string(i);
    conv(b, in, c, channels[i], channels[i + 1], kernels[i], 1, 1, 10 + 2 * i, true);
    b.node("Relu", {c}, {r}, r + "_relu");
    in = r;
  }
  b.output(in);
  return b.bytes();
}

std::string residual_block_32() {
  ModelBuilder b(13);
  b.input("x", graph::DataType::f32(), {1, 32, 8, 8});
  conv(b, "x", "a", 32, 32, 3, 1, 1, 30, true);
  b.node("Relu", {"a"}, {"ar"}, "relu_a");
  conv(b, "ar", "c", 32, 32, 3, 1, 1, 40, true);
  b.node("Add", {"c", "x"}, {"sum"}, "residual_add");
  b.node("Relu", {"sum"}, {"y"}, "relu_out");
  b.output("y");
  return b.bytes();
}

// x -> Q -> DQ -> Conv -> Q -> DQ -> Conv -> Q -> DQ, as quantize_static writes two layers.
std::string qdq_chain_model() {
  ModelBuilder b(13);
  b.input("x", graph::DataType::f32(), {int64_t{1}, int64_t{8}, int64_t{10}, int64_t{10}});
  b.initializer("s0", graph::test::f32_tensor({}, {0.02}));
  b.initializer("z0", graph::HostTensor::from_i64(graph::DataType::u8(), {}, {128}));
  b.node("QuantizeLinear", {"x", "s0", "z0"}, {"q0"});
  std::string in = "q0", in_scale = "s0", in_zero = "z0";
  const int64_t channels[3] = {8, 16, 12};
  const double out_scale[2] = {0.05, 0.08};
  for (int l = 0; l < 2; ++l) {
    const std::string L = std::to_string(l);
    const int64_t C = channels[l], O = channels[l + 1], K = l == 0 ? 3 : 1;
    b.node("DequantizeLinear", {in, in_scale, in_zero}, {"d" + L});
    std::vector<int64_t> w;
    for (int64_t i = 0; i < O * C * K * K; ++i) w.push_back((i * 37 + l * 11) % 255 - 127);
    b.initializer("w" + L, graph::HostTensor::from_i64(graph::DataType::i8(), {O, C, K, K}, w));
    const double sx = l == 0 ? 0.02 : out_scale[l - 1];
    std::vector<double> ws, bs;  // the bias is dequantized with sx * ws, as quantize_static writes
    std::vector<int64_t> bias;
    for (int64_t o = 0; o < O; ++o) {
      ws.push_back(0.001 * double(1 + o % 5));
      bs.push_back(sx * ws.back());
      bias.push_back((o * 97) % 401 - 200);
    }
    b.initializer("ws" + L, graph::test::f32_tensor({O}, ws));
    attr_int(b.node("DequantizeLinear", {"w" + L, "ws" + L}, {"wd" + L}), "axis", 0);
    b.initializer("b" + L, graph::HostTensor::from_i64(graph::DataType::i32(), {O}, bias));
    b.initializer("bs" + L, graph::test::f32_tensor({O}, bs));
    attr_int(b.node("DequantizeLinear", {"b" + L, "bs" + L}, {"bd" + L}), "axis", 0);
    auto& conv = b.node("Conv", {"d" + L, "wd" + L, "bd" + L}, {"c" + L}, "conv" + L);
    if (K == 3) attr_ints(conv, "pads", {1, 1, 1, 1});
    b.initializer("ys" + L, graph::test::f32_tensor({}, {out_scale[l]}));
    b.initializer("yz" + L, graph::HostTensor::from_i64(graph::DataType::u8(), {}, {100}));
    b.node("QuantizeLinear", {"c" + L, "ys" + L, "yz" + L}, {"q" + std::to_string(l + 1)});
    in = "q" + std::to_string(l + 1), in_scale = "ys" + L, in_zero = "yz" + L;
  }
  b.node("DequantizeLinear", {in, in_scale, in_zero}, {"y"});
  b.output("y");
  return b.bytes();
}

}  // namespace kiln::network::test
