// Operators of CNN, detection and transformer networks compiled to kernels: small models
// built here, compiled for the host and compared with the graph's reference evaluator; the
// report's layers show which nodes the pattern rewrites fused.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>

#include "tests/network/network_check.h"
#include "tests/network/test_models.h"

namespace kiln::network::test {
namespace {

using graph::HostTensor;
using graph::test::attr_float;
using graph::test::attr_int;
using graph::test::attr_ints;
using graph::test::attr_string;
using graph::test::f32_tensor;
using graph::test::ModelBuilder;
using graph::test::random_tensor;

void scalar(ModelBuilder& b, const std::string& name, double v) {
  b.initializer(name, f32_tensor({}, {v}));
}

TEST(NetworkOps, CnnActivationsPadSliceSplit) {
  ModelBuilder b(13);
  b.input("x", graph::DataType::f32(), {1, 4, 6, 6});
  b.initializer("slope", random_tensor({4, 1, 1}, 3, 0.5f));
  b.node("PRelu", {"x", "slope"}, {"a"});
  b.node("HardSwish", {"a"}, {"b"});
  b.initializer("pads", HostTensor::i64_vector({0, 0, 1, 2, 0, 0, 1, 0}));
  scalar(b, "pad_value", 0.5);
  b.node("Pad", {"b", "pads", "pad_value"}, {"c"});  // [1, 4, 8, 8]
  b.initializer("starts", HostTensor::i64_vector({1, 0}));
  b.initializer("ends", HostTensor::i64_vector({8, -1}));
  b.initializer("axes", HostTensor::i64_vector({2, 3}));
  b.initializer("steps", HostTensor::i64_vector({2, 1}));
  b.node("Slice", {"c", "starts", "ends", "axes", "steps"}, {"d"});  // [1, 4, 4, 7]
  attr_float(b.node("LeakyRelu", {"d"}, {"e"}), "alpha", 0.2f);
  auto& hs = b.node("HardSigmoid", {"e"}, {"f"});
  attr_float(hs, "alpha", 1.0f / 6.0f);
  b.initializer("split", HostTensor::i64_vector({1, 3}));
  attr_int(b.node("Split", {"f", "split"}, {"s0", "s1"}, "split"), "axis", 1);
  b.node("Erf", {"s1"}, {"y1"});
  b.output("s0");
  b.output("y1");
  std::vector<std::string> ops = layer_ops(expect_host_matches_reference(b.bytes()));
  for (const char* op : {"PRelu", "HardSwish", "Pad", "LeakyRelu", "HardSigmoid", "Erf"})
    EXPECT_EQ(count(ops, op), 1) << op;
  EXPECT_EQ(count(ops, "Slice"), 3);  // the Slice and the Split's two parts
  // Under qemu on arm-neon: the first output (s0) depends on every op but Erf.
  std::string skip = expect_arm_neon_matches_reference(b.bytes());
  if (!skip.empty()) GTEST_SKIP() << skip;
}

// x -> decomposed LayerNorm -> Linear -> decomposed GELU -> Linear -> + residual.
std::string encoder_ffn(bool squared_by_mul) {
  ModelBuilder b(13);
  b.input("x", graph::DataType::f32(), {2, 3, 8});
  attr_ints(b.node("ReduceMean", {"x"}, {"mean"}), "axes", {-1});  // an attribute until opset 18
  b.node("Sub", {"x", "mean"}, {"d"});
  scalar(b, "two", 2.0);
  if (squared_by_mul)
    b.node("Mul", {"d", "d"}, {"sq"});
  else
    b.node("Pow", {"d", "two"}, {"sq"});
  attr_ints(b.node("ReduceMean", {"sq"}, {"var"}), "axes", {2});
  scalar(b, "eps", 1e-5);
  b.node("Add", {"var", "eps"}, {"ve"});
  b.node("Sqrt", {"ve"}, {"sd"});
  b.node("Div", {"d", "sd"}, {"norm"});
  b.initializer("gamma", random_tensor({8}, 4, 1.0f));
  b.initializer("beta", random_tensor({8}, 5, 1.0f));
  b.node("Mul", {"norm", "gamma"}, {"scaled"});
  b.node("Add", {"scaled", "beta"}, {"ln"});
  b.initializer("w1", random_tensor({8, 16}, 6, 0.5f));
  b.initializer("b1", random_tensor({16}, 7, 0.5f));
  b.node("MatMul", {"ln", "w1"}, {"mm1"});
  b.node("Add", {"b1", "mm1"}, {"h"});
  scalar(b, "one", 1.0);
  scalar(b, "half", 0.5);
  if (!squared_by_mul) {  // x * (1 + erf(x / sqrt 2)) * 0.5, as torch writes it
    scalar(b, "sqrt2", std::sqrt(2.0));
    b.node("Div", {"h", "sqrt2"}, {"hs"});
    b.node("Erf", {"hs"}, {"he"});
    b.node("Add", {"he", "one"}, {"h1"});
    b.node("Mul", {"h", "h1"}, {"hm"});
    b.node("Mul", {"hm", "half"}, {"g"});
  } else {  // (0.5 * x) * (1 + erf(x * (1 / sqrt 2)))
    scalar(b, "rsqrt2", 1.0 / std::sqrt(2.0));
    b.node("Mul", {"h", "rsqrt2"}, {"hs"});
    b.node("Erf", {"hs"}, {"he"});
    b.node("Add", {"one", "he"}, {"h1"});
    b.node("Mul", {"half", "h"}, {"hh"});
    b.node("Mul", {"hh", "h1"}, {"g"});
  }
  b.initializer("w2", random_tensor({16, 8}, 8, 0.5f));
  b.initializer("b2", random_tensor({8}, 9, 0.5f));
  b.node("MatMul", {"g", "w2"}, {"mm2"});
  b.node("Add", {"mm2", "b2"}, {"o"});
  b.node("Add", {"o", "ln"}, {"y"});
  b.output("y");
  return b.bytes();
}

TEST(NetworkOps, DecomposedLayerNormGeluAndLinearBiasFuse) {
  for (bool by_mul : {false, true}) {
    std::vector<std::string> ops = layer_ops(expect_host_matches_reference(encoder_ffn(by_mul)));
    // LayerNorm, Linear (+bias), Gelu, Linear (+bias +residual): nothing else.
    EXPECT_EQ(ops, (std::vector<std::string>{"LayerNormalization", "MatMul", "Gelu", "MatMul"}))
        << "variant " << by_mul;
  }
}

// The workloads of the report's Conv layers, one per line ("... f32 +bias +silu\n").
std::string conv_workloads(const CompileReport& report) {
  std::string convs;
  for (const LayerRow& l : report.layers)
    if (l.op_type == "Conv") convs += l.workload + "\n";
  return convs;
}

// SiLU as exporters write it, x * Sigmoid(x) in either order, becomes one Silu node
// (fuse_self_gated.h): after a conv (batch norm folded in between, or a residual Add fused) a conv
// epilogue step, elsewhere one elementwise kernel. HardSwish after a conv is an epilogue
// step too.
TEST(NetworkOps, SiluAndHardSwishFuseIntoTheConvBefore) {
  ModelBuilder b(14);
  b.input("x", graph::DataType::f32(), {1, 16, 7, 9});
  b.initializer("w0", random_tensor({16, 16, 3, 3}, 1, 0.3f));
  attr_ints(b.node("Conv", {"x", "w0"}, {"c0"}), "pads", {1, 1, 1, 1});
  std::vector<double> positive;
  for (int c = 0; c < 16; ++c) positive.push_back(0.5 + 0.05 * c);
  b.initializer("scale", f32_tensor({16}, positive));
  b.initializer("shift", random_tensor({16}, 3, 0.2f));
  b.initializer("mean", random_tensor({16}, 4, 0.1f));
  b.initializer("var", f32_tensor({16}, positive));
  b.node("BatchNormalization", {"c0", "scale", "shift", "mean", "var"}, {"n0"});
  b.node("Sigmoid", {"n0"}, {"s0"});
  b.node("Mul", {"n0", "s0"}, {"a0"});  // x * sigmoid(x)
  b.initializer("w1", random_tensor({16, 16, 1, 1}, 6, 0.3f));
  b.node("Conv", {"a0", "w1"}, {"c1"});
  b.node("HardSwish", {"c1"}, {"a1"});
  b.node("Add", {"a1", "x"}, {"r"});
  b.node("Sigmoid", {"r"}, {"s2"});
  b.node("Mul", {"s2", "r"}, {"y"});  // sigmoid(x) * x after the residual: still the conv's
  b.node("Sigmoid", {"x"}, {"sx"});
  b.node("Mul", {"x", "sx"}, {"z"});  // on the input: a kernel of its own
  b.output("y");
  b.output("z");
  const CompileReport report = expect_host_matches_reference(b.bytes());
  const std::vector<std::string> ops = layer_ops(report);
  EXPECT_EQ(count(ops, "Sigmoid"), 0);
  EXPECT_EQ(count(ops, "Mul"), 0);
  EXPECT_EQ(count(ops, "HardSwish"), 0);
  EXPECT_EQ(count(ops, "Silu"), 1);
  const std::string convs = conv_workloads(report);
  EXPECT_NE(convs.find("+bias +silu\n"), std::string::npos) << convs;
  EXPECT_NE(convs.find("+hard_swish +residual +silu\n"), std::string::npos) << convs;
}

// Mish as PyTorch exports it before opset 18, x * Tanh(Softplus(x)) (either order), and
// HardSwish as x * HardSigmoid(x) before opset 14 become one node each (fuse_self_gated.h)
// and after a conv an epilogue step; a gate whose Softplus has another reader, or a
// HardSigmoid of other coefficients, stays as written.
TEST(NetworkOps, MishAndHardSwishFuseIntoTheConvBefore) {
  ModelBuilder b(11);
  b.input("x", graph::DataType::f32(), {1, 8, 6, 7});
  b.initializer("w0", random_tensor({16, 8, 3, 3}, 1, 0.6f));
  b.initializer("b0", random_tensor({16}, 2, 0.5f));
  attr_ints(b.node("Conv", {"x", "w0", "b0"}, {"c0"}), "pads", {1, 1, 1, 1});
  b.node("Softplus", {"c0"}, {"sp0"});
  b.node("Tanh", {"sp0"}, {"t0"});
  b.node("Mul", {"c0", "t0"}, {"m0"});
  b.initializer("w1", random_tensor({16, 16, 1, 1}, 3, 0.4f));
  b.node("Conv", {"m0", "w1"}, {"c1"});
  b.node("Softplus", {"c1"}, {"sp1"});
  b.node("Tanh", {"sp1"}, {"t1"});
  b.node("Mul", {"t1", "c1"}, {"y"});  // tanh first
  b.node("Softplus", {"x"}, {"sp2"});
  b.node("Tanh", {"sp2"}, {"t2"});
  b.node("Mul", {"x", "t2"}, {"m2"});   // on the input: a kernel of its own
  b.node("Add", {"m2", "sp2"}, {"z"});  // the Softplus read twice: not a Mish
  // HardSwish as x * HardSigmoid(x) with alpha 1/6: fused; with HardSigmoid's default alpha
  // (0.2) it is another function and stays as written.
  b.initializer("w2", random_tensor({16, 16, 1, 1}, 4, 0.4f));
  b.node("Conv", {"y", "w2"}, {"c2"});
  attr_float(b.node("HardSigmoid", {"c2"}, {"hs2"}), "alpha", 1.0f / 6);
  b.node("Mul", {"hs2", "c2"}, {"h2"});
  b.node("HardSigmoid", {"h2"}, {"hs3"});
  b.node("Mul", {"h2", "hs3"}, {"h3"});
  b.output("h3");
  b.output("z");
  const CompileReport report = expect_host_matches_reference(b.bytes());
  const std::vector<std::string> ops = layer_ops(report);
  EXPECT_EQ(count(ops, "Mish"), 0) << "both convs' Mish are epilogue steps";
  EXPECT_EQ(count(ops, "Softplus"), 1);
  EXPECT_EQ(count(ops, "Tanh"), 1);
  EXPECT_EQ(count(ops, "HardSigmoid"), 1);
  EXPECT_EQ(count(ops, "HardSwish"), 0);
  const std::string convs = conv_workloads(report);
  EXPECT_EQ(std::count(convs.begin(), convs.end(), '\n'), 3) << convs;
  EXPECT_NE(convs.find("+bias +mish\n"), std::string::npos) << convs;
  EXPECT_NE(convs.find("f32 +mish\n"), std::string::npos) << convs;
  EXPECT_NE(convs.find("f32 +hard_swish\n"), std::string::npos) << convs;
}

// Kernel taps that only read padding are dropped (prune_dead_taps.h): a 3x3 of dilation 6 on a
// 5x6 map reads real pixels with its centre only and becomes a 1x1 conv; a 5x1 of dilation 3
// with pads of 6 on 5 rows loses its first and last rows (pads 3). Output sizes and values
// stay those of the original convs; a conv whose taps all read pixels is left alone.
TEST(NetworkOps, ConvTapsThatReadOnlyPaddingAreDropped) {
  ModelBuilder m(13);
  m.input("x", graph::DataType::f32(), {1, 16, 5, 6});
  m.initializer("w0", random_tensor({16, 16, 3, 3}, 1, 0.3f));
  m.initializer("b0", random_tensor({16}, 2, 0.3f));
  auto& aspp = m.node("Conv", {"x", "w0", "b0"}, {"a"});
  attr_ints(aspp, "pads", {6, 6, 6, 6});
  attr_ints(aspp, "dilations", {6, 6});
  m.node("Relu", {"a"}, {"r"});
  m.initializer("w1", random_tensor({8, 16, 5, 1}, 3, 0.3f));
  auto& column = m.node("Conv", {"r", "w1"}, {"c"});  // (5 + 12 - 13) + 1 = 5 rows out
  attr_ints(column, "pads", {6, 0, 6, 0});
  attr_ints(column, "dilations", {3, 1});
  m.initializer("w2", random_tensor({8, 8, 3, 3}, 4, 0.3f));
  attr_ints(m.node("Conv", {"c", "w2"}, {"y"}), "pads", {1, 1, 1, 1});
  m.output("y");
  const CompileReport report = expect_host_matches_reference(m.bytes());
  std::vector<std::string> convs;
  for (const LayerRow& l : report.layers)
    if (l.op_type == "Conv") convs.push_back(l.workload);
  ASSERT_EQ(convs.size(), 3u);
  EXPECT_NE(convs[0].find("KH=1 KW=1 N=1 O=16 PH=0 PW=0"), std::string::npos) << convs[0];
  EXPECT_NE(convs[1].find("DH=3 DW=1 H=5 KH=3 KW=1 N=1 O=8 PH=3 PW=0"), std::string::npos)
      << convs[1];
  EXPECT_NE(convs[2].find("KH=3 KW=3 N=1 O=8 PH=1 PW=1"), std::string::npos) << convs[2];
}

// SSDlite's last extra layers: a 3x3 stride-2 conv over a 2x2 map only reads rows and columns
// 0 and 1 with its last two taps, so pruning leaves pads [1, 1, 0, 0]: explicit_pads then
// moves the asymmetric part into a Pad.
TEST(NetworkOps, PrunedTapsThatLeaveAsymmetricPadsGetAPad) {
  ModelBuilder m(13);
  m.input("x", graph::DataType::f32(), {1, 8, 2, 2});
  m.initializer("w", random_tensor({8, 8, 3, 3}, 5, 0.3f));
  auto& conv = m.node("Conv", {"x", "w"}, {"y"});
  attr_ints(conv, "pads", {1, 1, 1, 1});
  attr_ints(conv, "strides", {2, 2});
  m.output("y");
  const std::vector<std::string> ops = layer_ops(expect_host_matches_reference(m.bytes()));
  EXPECT_EQ(count(ops, "Pad"), 1);
}

// A Sigmoid read by something besides the Mul stays as it is.
TEST(NetworkOps, SigmoidWithOtherReadersIsNotSilu) {
  ModelBuilder b(14);
  b.input("x", graph::DataType::f32(), {4, 33});
  b.node("Sigmoid", {"x"}, {"s"});
  b.node("Mul", {"x", "s"}, {"y"});
  b.node("Neg", {"s"}, {"z"});
  b.output("y");
  b.output("z");
  const std::vector<std::string> ops = layer_ops(expect_host_matches_reference(b.bytes()));
  EXPECT_EQ(count(ops, "Silu"), 0);
  EXPECT_EQ(count(ops, "Sigmoid"), 1);
}

TEST(NetworkOps, AttentionCoreGatherCastRank5Transpose) {
  ModelBuilder b(13);
  b.input("x", graph::DataType::f32(), {2, 4, 8});
  attr_ints(b.node("Transpose", {"x"}, {"xt"}), "perm", {0, 2, 1});
  b.node("MatMul", {"x", "xt"}, {"s"});  // both operands computed: batched
  attr_int(b.node("Softmax", {"s"}, {"p"}), "axis", -1);
  b.node("MatMul", {"p", "x"}, {"c"});
  b.initializer("one", HostTensor::from_i64(graph::DataType::i64(), {}, {1}));
  attr_int(b.node("Gather", {"c", "one"}, {"g0"}), "axis", 1);  // [2, 8]
  b.initializer("even", HostTensor::i64_vector({0, 2}));
  attr_int(b.node("Gather", {"c", "even"}, {"g1"}), "axis", 1);  // [2, 2, 8]
  attr_int(b.node("Cast", {"g0"}, {"y0"}), "to", 1);             // f32 -> f32
  b.initializer("shape5", HostTensor::i64_vector({2, 4, 2, 4, 1}));
  b.node("Reshape", {"c", "shape5"}, {"c5"});
  attr_ints(b.node("Transpose", {"c5"}, {"y2"}), "perm", {4, 2, 0, 1, 3});
  b.output("y0");
  b.output("g1");
  b.output("y2");
  std::vector<std::string> ops = layer_ops(expect_host_matches_reference(b.bytes()));
  EXPECT_EQ(count(ops, "Attention"), 1);  // the MatMuls and the Softmax, fused
  EXPECT_EQ(count(ops, "Gather"), 2);
}

// Attention as a transformer layer writes it per head: K transposed, Q K^T scaled, Softmax,
// times V. It runs as one attention kernel (the scale moves onto Q first), a mask added to
// the scores too; probabilities that are also an output, and a mask broadcast along the keys,
// keep the scores a value of their own: MatMul, Softmax, MatMul. 37 keys: rows of scores
// that are not whole vectors.
TEST(NetworkOps, AttentionRunsAsOneKernel) {
  ModelBuilder b(13);
  for (const char* x : {"q", "k", "v"}) b.input(x, graph::DataType::f32(), {1, 3, 37, 8});
  attr_ints(b.node("Transpose", {"k"}, {"kt"}), "perm", {0, 1, 3, 2});
  b.node("MatMul", {"q", "kt"}, {"s"});
  scalar(b, "root_d", std::sqrt(8.0));
  b.node("Div", {"s", "root_d"}, {"scaled"});
  attr_int(b.node("Softmax", {"scaled"}, {"p"}), "axis", -1);
  b.node("MatMul", {"p", "v"}, {"y"});
  b.output("y");
  // Masked: the last 5 keys get -1e4.
  std::vector<double> mask(37, 0.0);
  for (int i = 32; i < 37; ++i) mask[i] = -1e4;
  b.initializer("mask", f32_tensor({1, 1, 1, 37}, mask));
  b.node("MatMul", {"q", "kt"}, {"s2"});
  b.node("Add", {"mask", "s2"}, {"masked"});
  attr_int(b.node("Softmax", {"masked"}, {"p2"}), "axis", -1);
  b.node("MatMul", {"p2", "v"}, {"y2"});
  b.output("y2");
  // The probabilities read twice.
  b.node("MatMul", {"k", "kt"}, {"s3"});
  attr_int(b.node("Softmax", {"s3"}, {"p3"}), "axis", -1);
  b.node("MatMul", {"p3", "q"}, {"y3"});
  b.output("y3");
  b.output("p3");
  // A mask that broadcasts along the keys.
  b.initializer("row_mask", random_tensor({1, 1, 37, 1}, 7, 1.0f));
  b.node("MatMul", {"v", "kt"}, {"s4"});
  b.node("Add", {"s4", "row_mask"}, {"masked4"});
  attr_int(b.node("Softmax", {"masked4"}, {"p4"}), "axis", -1);
  b.node("MatMul", {"p4", "q"}, {"y4"});
  b.output("y4");
  std::vector<std::string> ops = layer_ops(expect_host_matches_reference(b.bytes()));
  EXPECT_EQ(count(ops, "Attention"), 2);
  EXPECT_EQ(count(ops, "Softmax"), 2);
  EXPECT_EQ(count(ops, "MatMul"), 4);
  std::string skip = expect_arm_neon_matches_reference(b.bytes());
  if (!skip.empty()) GTEST_SKIP() << skip;
}

// The masks encoders and decoders add, fused: BERT's padding mask computed from an int64
// input and broadcast over heads and queries ([2, 1, 1, N] over [2, 3, M, N]: each batch its
// own), a causal mask of every query row ([M, N]), and a per-head bias ([3, M, N]).
TEST(NetworkOps, MaskedAttentionRunsAsOneKernel) {
  ModelBuilder b(13);
  b.input("q", graph::DataType::f32(), {2, 3, 21, 8});
  b.input("kt", graph::DataType::f32(), {2, 3, 8, 21});
  b.input("v", graph::DataType::f32(), {2, 3, 21, 8});
  b.input("mask", graph::DataType::i64(), {2, 21});
  attr_int(b.node("Cast", {"mask"}, {"maskf"}), "to", 1);
  scalar(b, "one", 1.0);
  b.node("Sub", {"one", "maskf"}, {"pad"});
  scalar(b, "big", -1e4);
  b.node("Mul", {"pad", "big"}, {"additive"});
  b.initializer("axes", HostTensor::i64_vector({1, 2}));
  b.node("Unsqueeze", {"additive", "axes"}, {"additive4"});
  b.node("MatMul", {"q", "kt"}, {"s"});
  b.node("Add", {"s", "additive4"}, {"masked"});
  attr_int(b.node("Softmax", {"masked"}, {"p"}), "axis", -1);
  b.node("MatMul", {"p", "v"}, {"y"});
  b.output("y");
  std::vector<double> causal(21 * 21);
  for (int i = 0; i < 21; ++i)
    for (int j = 0; j < 21; ++j) causal[i * 21 + j] = j > i ? -1e4 : 0.0;
  b.initializer("causal", f32_tensor({21, 21}, causal));
  b.node("MatMul", {"q", "kt"}, {"s2"});
  b.node("Add", {"s2", "causal"}, {"masked2"});
  attr_int(b.node("Softmax", {"masked2"}, {"p2"}), "axis", -1);
  b.node("MatMul", {"p2", "v"}, {"y2"});
  b.output("y2");
  b.initializer("bias", random_tensor({3, 21, 21}, 8, 2.0f));
  b.node("MatMul", {"q", "kt"}, {"s3"});
  b.node("Add", {"s3", "bias"}, {"masked3"});
  attr_int(b.node("Softmax", {"masked3"}, {"p3"}), "axis", -1);
  b.node("MatMul", {"p3", "v"}, {"y3"});
  b.output("y3");
  std::vector<int64_t> keep(42, 1);
  for (int j = 15; j < 21; ++j) keep[21 + j] = 0;  // the second sequence's last 6 are padding
  const HostTensor mask = HostTensor::from_i64(graph::DataType::i64(), {2, 21}, keep);
  std::vector<std::string> ops =
      layer_ops(expect_host_matches_reference(b.bytes(), {}, {{"mask", mask}}));
  EXPECT_EQ(count(ops, "Attention"), 3);
  EXPECT_EQ(count(ops, "Softmax"), 0);
}

// A diffusion model's timestep embedding (Sin and Cos of the timestep times frequencies,
// concatenated) and mask logic (And, Or, Xor of comparisons) run as kernels; a scalar
// constant between convs runs in their blocked layout.
TEST(NetworkOps, SinCosLogicAndScalarsBetweenConvs) {
  ModelBuilder b(13);
  b.input("t", graph::DataType::f32(), {2, 1});
  b.initializer("freqs", f32_tensor({1, 4}, {1.0, 0.1, 0.01, 0.001}));
  b.node("Mul", {"t", "freqs"}, {"arg"});  // [2, 4]
  b.node("Sin", {"arg"}, {"sin"});
  b.node("Cos", {"arg"}, {"cos"});
  attr_int(b.node("Concat", {"sin", "cos"}, {"emb"}), "axis", 1);
  scalar(b, "lo", -0.5);
  scalar(b, "hi", 0.5);
  b.node("Greater", {"emb", "lo"}, {"above"});
  b.node("Less", {"emb", "hi"}, {"below"});
  b.node("And", {"above", "below"}, {"inside"});
  b.node("Or", {"above", "below"}, {"either"});
  b.node("Xor", {"inside", "either"}, {"outside"});
  b.node("Where", {"outside", "emb", "lo"}, {"y0"});
  b.input("x", graph::DataType::f32(), {1, 8, 6, 6});
  b.initializer("w1", random_tensor({16, 8, 3, 3}, 4, 0.3f));
  attr_ints(b.node("Conv", {"x", "w1"}, {"c1"}), "pads", {1, 1, 1, 1});
  scalar(b, "factor", 2.0);
  b.node("Div", {"c1", "factor"}, {"half"});
  b.initializer("w2", random_tensor({8, 16, 3, 3}, 5, 0.3f));
  attr_ints(b.node("Conv", {"half", "w2"}, {"y1"}), "pads", {1, 1, 1, 1});
  b.output("y0");
  b.output("y1");
  const graph::HostTensor t = f32_tensor({2, 1}, {3.0, 811.0});
  std::vector<std::string> ops =
      layer_ops(expect_host_matches_reference(b.bytes(), {}, {{"t", t}}));
  for (const char* op : {"Sin", "Cos", "And", "Or", "Xor", "Div"})
    EXPECT_EQ(count(ops, op), 1) << op;
  std::string skip = expect_arm_neon_matches_reference(b.bytes());
  if (!skip.empty()) GTEST_SKIP() << skip;
}

TEST(NetworkOps, LayerNormalizationOpset17WithoutBias) {
  ModelBuilder b(17);
  b.input("x", graph::DataType::f32(), {3, 2, 5});
  b.initializer("gamma", random_tensor({2, 5}, 4, 1.0f));
  auto& n = b.node("LayerNormalization", {"x", "gamma"}, {"y"});
  attr_int(n, "axis", 1);
  attr_float(n, "epsilon", 1e-3f);
  b.output("y");
  expect_host_matches_reference(b.bytes());
}

// Conv1d stacks as audio and text models have them (Whisper, wav2vec2), BatchNorm1d on
// [N, C, L] and on [N, C] (LeViT, MLP heads), 1-D pools and AdaptiveAvgPool1d (Swin's pooler):
// each runs as the 2-D kernel over a height-1 map.
TEST(NetworkOps, OneDimensionalConvPoolAndBatchNorm) {
  ModelBuilder b(13);
  b.input("x", graph::DataType::f32(), {1, 6, 40});
  b.initializer("w1", random_tensor({8, 6, 5}, 1, 0.3f));
  b.initializer("b1", random_tensor({8}, 2, 0.1f));
  auto& c1 = b.node("Conv", {"x", "w1", "b1"}, {"c1"});
  attr_ints(c1, "pads", {2, 2});
  attr_ints(c1, "strides", {2});  // [1, 8, 20]
  b.initializer("bn_scale", random_tensor({8}, 3, 0.5f));
  b.initializer("bn_bias", random_tensor({8}, 4, 0.1f));
  b.initializer("bn_mean", random_tensor({8}, 5, 0.1f));
  b.initializer("bn_var", f32_tensor({8}, {1, 2, 0.5, 1, 1.5, 1, 0.8, 1.2}));
  b.node("BatchNormalization", {"c1", "bn_scale", "bn_bias", "bn_mean", "bn_var"}, {"n1"});
  b.node("Sigmoid", {"n1"}, {"g1"});
  b.initializer("w2", random_tensor({8, 4, 3}, 6, 0.3f));  // groups 2, dilation 2
  auto& c2 = b.node("Conv", {"g1", "w2"}, {"c2"});
  attr_int(c2, "group", 2);
  attr_ints(c2, "dilations", {2});
  attr_ints(c2, "pads", {2, 2});  // [1, 8, 20]
  b.node("Add", {"c2", "g1"}, {"r"});
  auto& mp = b.node("MaxPool", {"r"}, {"p"});
  attr_ints(mp, "kernel_shape", {3});
  attr_ints(mp, "strides", {2});
  attr_ints(mp, "pads", {1, 1});  // [1, 8, 10]
  b.initializer("wt", random_tensor({8, 4, 4}, 7, 0.3f));
  auto& ct = b.node("ConvTranspose", {"p", "wt"}, {"u"});
  attr_ints(ct, "strides", {2});
  attr_ints(ct, "pads", {1, 1});  // [1, 4, 20]
  b.node("Relu", {"u"}, {"a"});
  auto& ap = b.node("AveragePool", {"a"}, {"q"});
  attr_ints(ap, "kernel_shape", {2});
  attr_ints(ap, "strides", {2});                // [1, 4, 10]
  b.node("GlobalAveragePool", {"q"}, {"gap"});  // [1, 4, 1]
  b.initializer("flat", HostTensor::i64_vector({1, 4}));
  b.node("Reshape", {"gap", "flat"}, {"v"});
  b.initializer("s2", random_tensor({4}, 8, 0.5f));
  b.initializer("b2", random_tensor({4}, 9, 0.1f));
  b.initializer("m2", random_tensor({4}, 10, 0.1f));
  b.initializer("v2", f32_tensor({4}, {1, 0.5, 2, 1}));
  b.node("BatchNormalization", {"v", "s2", "b2", "m2", "v2"}, {"y"});  // on [N, C]
  b.output("y");
  b.output("q");
  CompileReport r = expect_host_matches_reference(b.bytes());
  EXPECT_EQ(r.bn_folded, 1);  // BatchNorm1d after Conv1d folds into it, as in 2-D
  std::vector<std::string> ops = layer_ops(r);
  for (const char* op : {"Conv", "MaxPool", "ConvTranspose", "AveragePool"})
    EXPECT_GE(count(ops, op), 1) << op;
  std::string skip = expect_arm_neon_matches_reference(b.bytes());
  if (!skip.empty()) GTEST_SKIP() << skip;
}

// Padding as Keras, TensorFlow and Hugging Face's TF ports export it: auto_pad SAME_UPPER and
// SAME_LOWER, and explicit asymmetric pads (TF's SAME with stride 2 on an even size), on a
// conv, a depthwise conv, a MaxPool and an AveragePool that counts padding.
TEST(NetworkOps, SameAndAsymmetricPadsOfConvsAndPools) {
  ModelBuilder b(13);
  b.input("x", graph::DataType::f32(), {1, 8, 16, 16});
  b.initializer("w1", random_tensor({16, 8, 3, 3}, 1, 0.3f));
  auto& c1 = b.node("Conv", {"x", "w1"}, {"c1"});
  attr_string(c1, "auto_pad", "SAME_UPPER");
  attr_ints(c1, "strides", {2, 2});  // [1, 16, 8, 8], pads 0 before, 1 after
  b.node("Relu", {"c1"}, {"r1"});
  b.initializer("dw", random_tensor({16, 1, 3, 3}, 2, 0.3f));
  auto& c2 = b.node("Conv", {"r1", "dw"}, {"c2"});
  attr_int(c2, "group", 16);
  attr_ints(c2, "pads", {0, 0, 1, 1});
  attr_ints(c2, "strides", {2, 2});  // [1, 16, 4, 4]
  b.initializer("w3", random_tensor({16, 16, 2, 2}, 3, 0.3f));
  auto& c3 = b.node("Conv", {"c2", "w3"}, {"c3"});
  attr_string(c3, "auto_pad", "SAME_LOWER");  // kernel 2, stride 1: 1 before, 0 after
  auto& mp = b.node("MaxPool", {"c3"}, {"p"});
  attr_ints(mp, "kernel_shape", {3, 3});
  attr_ints(mp, "strides", {2, 2});
  attr_string(mp, "auto_pad", "SAME_UPPER");  // [1, 16, 2, 2]
  auto& ap = b.node("AveragePool", {"c3"}, {"q"});
  attr_ints(ap, "kernel_shape", {2, 2});
  attr_ints(ap, "pads", {1, 0, 0, 1});
  attr_int(ap, "count_include_pad", 1);  // [1, 16, 4, 4]
  b.output("p");
  b.output("q");
  expect_host_matches_reference(b.bytes());
  std::string skip = expect_arm_neon_matches_reference(b.bytes());
  if (!skip.empty()) GTEST_SKIP() << skip;
}

// T5's attention adds a computed position bias to Q.K^T: the batched MatMul takes no epilogue,
// so the Add stays an elementwise kernel (it was fused, then refused).
TEST(NetworkOps, BatchedMatMulKeepsItsAddOfAComputedBias) {
  ModelBuilder b(13);
  b.input("q", graph::DataType::f32(), {2, 3, 4, 8});
  b.input("k", graph::DataType::f32(), {2, 3, 8, 4});
  b.input("bias", graph::DataType::f32(), {2, 3, 4, 4});
  b.node("MatMul", {"q", "k"}, {"scores"});
  b.node("Add", {"scores", "bias"}, {"biased"});
  attr_int(b.node("Softmax", {"biased"}, {"y"}), "axis", -1);
  b.output("y");
  std::vector<std::string> ops = layer_ops(expect_host_matches_reference(b.bytes()));
  EXPECT_EQ(count(ops, "Add"), 1);
}

// BERT's epsilon 1e-12, on rows whose variance (1e-10) it is not negligible against: an epsilon
// rounded to 1e-9 would scale the output by 0.3.
TEST(NetworkOps, LayerNormalizationWithBertsTinyEpsilon) {
  ModelBuilder b(17);
  b.input("x", graph::DataType::f32(), {4, 16});
  b.initializer("gamma", random_tensor({16}, 4, 1.0f));
  auto& n = b.node("LayerNormalization", {"x", "gamma"}, {"y"});
  attr_float(n, "epsilon", 1e-12f);
  b.output("y");
  HostTensor x = random_tensor({4, 16}, 5, 1e-5f);
  expect_host_matches_reference(b.bytes(), {}, {{"x", x}});
}

// A detection neck's upsampling: nearest 2x by scales (opset 13, and Upsample at opset 9),
// linear to given sizes with half_pixel and align_corners.
TEST(NetworkOps, ResizeAndUpsample) {
  ModelBuilder b(13);
  b.input("x", graph::DataType::f32(), {1, 3, 5, 6});
  b.initializer("roi", HostTensor::from_f64(graph::DataType::f32(), {0}, {}));
  b.initializer("scales", f32_tensor({4}, {1, 1, 2, 2}));
  b.initializer("no_scales", HostTensor::from_f64(graph::DataType::f32(), {0}, {}));
  b.initializer("sizes", HostTensor::i64_vector({1, 3, 9, 4}));
  auto& nearest = b.node("Resize", {"x", "roi", "scales"}, {"up"});
  attr_string(nearest, "mode", "nearest");
  attr_string(nearest, "coordinate_transformation_mode", "asymmetric");
  attr_string(nearest, "nearest_mode", "floor");
  auto& linear = b.node("Resize", {"x", "roi", "no_scales", "sizes"}, {"lin"});
  attr_string(linear, "mode", "linear");
  auto& corners = b.node("Resize", {"up", "roi", "no_scales", "sizes"}, {"corners"});
  attr_string(corners, "mode", "linear");
  attr_string(corners, "coordinate_transformation_mode", "align_corners");
  b.output("lin");
  b.output("corners");
  std::vector<std::string> ops = layer_ops(expect_host_matches_reference(b.bytes()));
  EXPECT_EQ(count(ops, "Resize"), 3);
  std::string skip = expect_arm_neon_matches_reference(b.bytes());  // "lin" under qemu
  if (!skip.empty()) GTEST_SKIP() << skip;

  ModelBuilder up(9);
  up.input("x", graph::DataType::f32(), {1, 2, 3, 4});
  up.initializer("scales", f32_tensor({4}, {1, 1, 2, 3}));
  up.node("Upsample", {"x", "scales"}, {"y"});
  up.output("y");
  expect_host_matches_reference(up.bytes());
}

// A causal attention mask baked into the model (masked_fill of -inf before the softmax), a
// finite fill on the false side, and a select between two computed tensors.
TEST(NetworkOps, WhereOfConstantMasks) {
  ModelBuilder b(13);
  b.input("s", graph::DataType::f32(), {2, 4, 4});
  std::vector<int64_t> upper;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) upper.push_back(j > i ? 1 : 0);
  b.initializer("future", HostTensor::from_i64(graph::DataType::boolean(), {4, 4}, upper));
  scalar(b, "minus_inf", -INFINITY);
  scalar(b, "big", -1e4);
  b.node("Where", {"future", "minus_inf", "s"}, {"masked"});
  attr_int(b.node("Softmax", {"masked"}, {"p"}), "axis", -1);
  b.node("Where", {"future", "s", "big"}, {"kept"});
  b.node("Exp", {"s"}, {"e"});
  b.node("Where", {"future", "e", "s"}, {"both"});
  for (const char* y : {"p", "kept", "both"}) b.output(y);
  std::vector<std::string> ops = layer_ops(expect_host_matches_reference(b.bytes()));
  EXPECT_EQ(count(ops, "Where"), 0);  // Add; Mul + Add; Mul, Mul, Add
  EXPECT_EQ(count(ops, "Add"), 3);
}

// ConvTranspose as OCR and segmentation heads use it: 2x2 stride 2 with a bias, and 3x3
// stride 2 given an output_shape (pads derived) with groups.
TEST(NetworkOps, ConvTranspose) {
  ModelBuilder b(13);
  b.input("x", graph::DataType::f32(), {1, 4, 5, 6});
  b.initializer("w", random_tensor({4, 3, 2, 2}, 31, 0.5f));
  b.initializer("bias", random_tensor({3}, 32, 0.5f));
  auto& up = b.node("ConvTranspose", {"x", "w", "bias"}, {"up"});
  attr_ints(up, "strides", {2, 2});
  attr_ints(up, "kernel_shape", {2, 2});
  b.initializer("wg", random_tensor({4, 2, 3, 3}, 33, 0.5f));
  auto& grouped = b.node("ConvTranspose", {"x", "wg"}, {"grouped"});
  attr_ints(grouped, "strides", {2, 2});
  attr_int(grouped, "group", 2);
  attr_ints(grouped, "output_shape", {10, 12});
  // Stride equal to a non-square kernel, no bias: DPT's patch unembedding.
  b.initializer("wp", random_tensor({4, 5, 4, 2}, 34, 0.5f));
  auto& patches = b.node("ConvTranspose", {"x", "wp"}, {"patches"});
  attr_ints(patches, "strides", {4, 2});
  b.output("up");
  b.output("grouped");
  b.output("patches");
  std::vector<std::string> ops = layer_ops(expect_host_matches_reference(b.bytes()));
  // The two whose stride is their kernel run as a 1x1 Conv and a move of its channels.
  EXPECT_EQ(count(ops, "ConvTranspose"), 1);
  EXPECT_EQ(count(ops, "Conv"), 2);
  std::string skip = expect_arm_neon_matches_reference(b.bytes());
  if (!skip.empty()) GTEST_SKIP() << skip;
}

// Reductions (last axis, a middle pair of axes, all axes, GlobalMaxPool) and
// InstanceNormalization, which becomes a LayerNormalization over H, W and a scale and bias.
TEST(NetworkOps, ReductionsAndInstanceNorm) {
  ModelBuilder b(13);
  b.input("x", graph::DataType::f32(), {2, 3, 4, 5});
  attr_ints(b.node("ReduceMean", {"x"}, {"mean_w"}), "axes", {-1});
  auto& mid = b.node("ReduceMax", {"x"}, {"max_hw"});
  attr_ints(mid, "axes", {2, 3});
  attr_int(mid, "keepdims", 0);
  b.initializer("axes_c", HostTensor::i64_vector({1}));
  b.node("ReduceSum", {"x", "axes_c"}, {"sum_c"});  // axes an input from opset 13
  b.node("ReduceSum", {"x"}, {"sum_all"});
  b.node("GlobalMaxPool", {"x"}, {"gmax"});
  b.initializer("in_scale", random_tensor({3}, 21, 1.0f));
  b.initializer("in_bias", random_tensor({3}, 22, 1.0f));
  b.node("InstanceNormalization", {"x", "in_scale", "in_bias"}, {"inorm"});
  for (const char* y : {"mean_w", "max_hw", "sum_c", "sum_all", "gmax", "inorm"}) b.output(y);
  std::vector<std::string> ops = layer_ops(expect_host_matches_reference(b.bytes()));
  EXPECT_EQ(count(ops, "LayerNormalization"), 1);
  EXPECT_EQ(count(ops, "ReduceSum"), 2);

  ModelBuilder apart(13);
  apart.input("x", graph::DataType::f32(), {2, 3, 4});
  attr_ints(apart.node("ReduceMean", {"x"}, {"y"}, "apart"), "axes", {0, 2});
  apart.output("y");
  TempDir dir;
  std::string path = dir.path() + "/apart.onnx";
  std::ofstream(path, std::ios::binary) << apart.bytes();
  try {
    compile_network({path, target_from_name("host"), {}, {}, dir.path() + "/out"});
    ADD_FAILURE() << "axes 0 and 2 compiled";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("not neighbours"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kiln::network::test
