// LSTM, GRU and RNN unrolled into kernels, the operators decompose_ops writes in terms of
// others, and the activations added for them: small models compiled for the host (and some
// for arm-neon under qemu) and compared with the reference evaluator, which computes LSTM,
// GRU and RNN by ONNX's equations on its own (checked against ONNX's node tests in
// onnx_conformance_test).
#include <gtest/gtest.h>

#include "tests/network/network_check.h"
#include "tests/network/test_models.h"

namespace kiln::network::test {
namespace {

using graph::HostTensor;
using graph::test::attr_float;
using graph::test::attr_floats;
using graph::test::attr_int;
using graph::test::attr_ints;
using graph::test::attr_string;
using graph::test::f32_tensor;
using graph::test::ModelBuilder;
using graph::test::random_tensor;

void attr_strings(onnx::NodeProto& node, const std::string& name,
                  const std::vector<std::string>& values) {
  onnx::AttributeProto* a = node.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRINGS);
  for (const std::string& v : values) a->add_strings(v);
}

// Weights of a recurrence: W [dirs, gates x H, I], R [dirs, gates x H, H], B [dirs, 2 x gates x H].
void recurrent_weights(ModelBuilder& b, const std::string& prefix, int64_t dirs, int64_t gates,
                       int64_t hidden, int64_t input, uint32_t seed) {
  b.initializer(prefix + "W", random_tensor({dirs, gates * hidden, input}, seed, 0.6f));
  b.initializer(prefix + "R", random_tensor({dirs, gates * hidden, hidden}, seed + 1, 0.6f));
  b.initializer(prefix + "B", random_tensor({dirs, 2 * gates * hidden}, seed + 2, 0.4f));
}

// CRNN's recogniser head: a bidirectional LSTM over a sequence of feature columns, the two
// directions joined per step, a linear layer to the classes and LogSoftmax (CTC's input).
TEST(RecurrentNetworks, BidirectionalLstmWithLinearAndLogSoftmaxLikeCrnn) {
  const int64_t T = 7, N = 2, I = 5, H = 6, classes = 4;
  ModelBuilder b(13);
  b.input("x", graph::DataType::f32(), {T, N, I});
  recurrent_weights(b, "", 2, 4, H, I, 11);
  b.initializer("h0", random_tensor({2, N, H}, 21, 0.5f));
  b.initializer("c0", random_tensor({2, N, H}, 22, 0.5f));
  auto& lstm = b.node("LSTM", {"x", "W", "R", "B", "", "h0", "c0"}, {"Y", "Y_h", "Y_c"});
  attr_string(lstm, "direction", "bidirectional");
  attr_int(lstm, "hidden_size", H);
  auto& t = b.node("Transpose", {"Y"}, {"Yt"});  // [T, N, 2, H]
  attr_ints(t, "perm", {0, 2, 1, 3});
  b.initializer("shape", HostTensor::i64_vector({T, N, 2 * H}));
  b.node("Reshape", {"Yt", "shape"}, {"steps"});
  b.initializer("proj", random_tensor({2 * H, classes}, 31, 1.0f));
  b.node("MatMul", {"steps", "proj"}, {"logits"});
  attr_int(b.node("LogSoftmax", {"logits"}, {"log_probs"}), "axis", 2);
  b.output("log_probs");
  b.output("Y_h");
  b.output("Y_c");
  const std::vector<std::string> ops = layer_ops(expect_host_matches_reference(b.bytes()));
  EXPECT_EQ(count(ops, "LSTM"), 0);
  EXPECT_EQ(count(ops, "LogSoftmax"), 0);
  std::string skip = expect_arm_neon_matches_reference(b.bytes());
  if (!skip.empty()) GTEST_SKIP() << skip;
}

// GRU in both of its forms: linear_before_reset (PyTorch's) batch-first and running backward
// over sequences of different lengths, then the default form forward with a clip.
TEST(RecurrentNetworks, GruBothResetFormsBatchFirstReverseAndSequenceLengths) {
  const int64_t T = 6, N = 3, I = 4, H = 5;
  ModelBuilder b(14);
  b.input("x", graph::DataType::f32(), {N, T, I});
  recurrent_weights(b, "a", 1, 3, H, I, 41);
  b.initializer("lens", HostTensor::from_i64(graph::DataType::i32(), {N}, {6, 2, 4}));
  auto& first = b.node("GRU", {"x", "aW", "aR", "aB", "lens"}, {"Y1", "H1"});
  attr_string(first, "direction", "reverse");
  attr_int(first, "linear_before_reset", 1);
  attr_int(first, "layout", 1);
  attr_int(first, "hidden_size", H);
  b.initializer("shape", HostTensor::i64_vector({N, T, H}));
  b.node("Reshape", {"Y1", "shape"}, {"seq"});        // [N, T, 1, H] -> [N, T, H]
  auto& t = b.node("Transpose", {"seq"}, {"seq_t"});  // [T, N, H]
  attr_ints(t, "perm", {1, 0, 2});
  recurrent_weights(b, "b", 1, 3, H, H, 51);
  auto& second = b.node("GRU", {"seq_t", "bW", "bR", "bB"}, {"Y2"});
  attr_float(second, "clip", 0.75f);
  b.output("Y2");
  b.output("H1");
  const std::vector<std::string> ops = layer_ops(expect_host_matches_reference(b.bytes()));
  EXPECT_EQ(count(ops, "GRU"), 0);
}

// The LSTM options exporters rarely write but ONNX defines: peepholes, a coupled input and
// forget gate, other activations; and a simple RNN with Relu whose initial state is an
// input of the model.
TEST(RecurrentNetworks, LstmPeepholesCoupledGatesAndRnnWithAnInitialStateInput) {
  const int64_t T = 5, N = 2, I = 3, H = 4;
  ModelBuilder b(13);
  b.input("x", graph::DataType::f32(), {T, N, I});
  b.input("h0", graph::DataType::f32(), {1, N, H});
  recurrent_weights(b, "a", 1, 4, H, I, 61);
  b.initializer("P", random_tensor({1, 3 * H}, 64, 0.5f));
  auto& lstm = b.node("LSTM", {"x", "aW", "aR", "aB", "", "", "", "P"}, {"Y1"});
  attr_int(lstm, "input_forget", 1);
  attr_strings(lstm, "activations", {"HardSigmoid", "Softsign", "Tanh"});
  attr_floats(lstm, "activation_alpha", {0.3f});
  attr_floats(lstm, "activation_beta", {0.45f});
  b.initializer("shape", HostTensor::i64_vector({T, N, H}));
  b.node("Reshape", {"Y1", "shape"}, {"seq"});
  recurrent_weights(b, "b", 1, 1, H, H, 71);
  auto& rnn = b.node("RNN", {"seq", "bW", "bR", "bB", "", "h0"}, {"", "Y_h"});
  attr_strings(rnn, "activations", {"Relu"});
  b.output("Y_h");
  expect_host_matches_reference(b.bytes());
}

// LRN, DepthToSpace in both modes, SpaceToDepth, Tile, the reductions kiln computes through
// others, Sum and Mean of three inputs.
TEST(DecomposedOps, LrnDepthSpaceTileReductionsSumAndMean) {
  ModelBuilder b(13);
  b.input("x", graph::DataType::f32(), {1, 8, 4, 6});
  auto& lrn = b.node("LRN", {"x"}, {"n"});
  attr_int(lrn, "size", 4);  // even: the window reaches one channel back and two ahead
  attr_float(lrn, "alpha", 0.5f);
  attr_float(lrn, "beta", 0.75f);
  attr_float(lrn, "bias", 2.0f);
  auto& d2s = b.node("DepthToSpace", {"n"}, {"s"});  // [1, 2, 8, 12]
  attr_int(d2s, "blocksize", 2);
  attr_string(d2s, "mode", "CRD");
  attr_int(b.node("SpaceToDepth", {"s"}, {"d"}), "blocksize", 2);  // [1, 8, 4, 6]
  auto& dcr = b.node("DepthToSpace", {"d"}, {"s2"});               // DCR: [1, 2, 8, 12]
  attr_int(dcr, "blocksize", 2);
  b.initializer("repeats", HostTensor::i64_vector({2, 1, 1, 3}));
  b.node("Tile", {"s2", "repeats"}, {"tiled"});      // [2, 2, 8, 36]
  auto& l2 = b.node("ReduceL2", {"tiled"}, {"l2"});  // [2, 8, 36]
  attr_int(l2, "keepdims", 0);
  attr_ints(l2, "axes", {1});
  attr_ints(b.node("ReduceLogSumExp", {"tiled"}, {"lse"}), "axes", {1});  // [2, 1, 8, 36]
  attr_ints(b.node("ReduceSumSquare", {"tiled"}, {"ss"}), "axes", {1});
  attr_ints(b.node("ReduceL1", {"tiled"}, {"l1"}), "axes", {1});
  b.node("Sum", {"lse", "ss", "l1"}, {"sum"});
  b.node("Mean", {"lse", "sum", "l1"}, {"mean"});
  b.output("l2");
  b.output("mean");
  const std::vector<std::string> ops = layer_ops(expect_host_matches_reference(b.bytes()));
  for (const char* op : {"LRN", "DepthToSpace", "SpaceToDepth", "Tile", "Sum", "Mean"})
    EXPECT_EQ(count(ops, op), 0) << op;
  std::string skip = expect_arm_neon_matches_reference(b.bytes());
  if (!skip.empty()) GTEST_SKIP() << skip;
}

// Softmax over a middle axis, opset 11's flattening Softmax, and LogSoftmax where
// log(softmax(x)) would be -inf (differences of 1000).
TEST(DecomposedOps, SoftmaxOverAnyAxisAndLogSoftmaxOfLargeDifferences) {
  {
    ModelBuilder b(13);
    b.input("x", graph::DataType::f32(), {2, 5, 3, 4});
    attr_int(b.node("Softmax", {"x"}, {"p"}), "axis", 1);
    attr_int(b.node("LogSoftmax", {"x"}, {"lp"}), "axis", -2);
    b.output("p");
    b.output("lp");
    expect_host_matches_reference(b.bytes());
  }
  {
    ModelBuilder b(11);
    b.input("x", graph::DataType::f32(), {2, 5, 3});
    attr_int(b.node("Softmax", {"x"}, {"p"}), "axis", 1);  // over [5, 3] flattened
    b.initializer("scale", f32_tensor({}, {1000.0}));
    b.node("Mul", {"x", "scale"}, {"wide"});
    b.node("LogSoftmax", {"wide"}, {"lp"});  // axis 1 of opset 11: also flattened
    b.output("p");
    b.output("lp");
    expect_host_matches_reference(b.bytes());
  }
}

// Attention written with einsum: the score and context products, a projection by a weight
// (implicit output), a transpose and a sum of one operand.
TEST(DecomposedOps, EinsumAttentionProductsProjectionTransposeAndSum) {
  ModelBuilder b(13);
  b.input("q", graph::DataType::f32(), {2, 6, 3, 4});
  b.input("k", graph::DataType::f32(), {2, 5, 3, 4});
  b.input("v", graph::DataType::f32(), {2, 5, 3, 4});
  attr_string(b.node("Einsum", {"q", "k"}, {"scores"}), "equation", "bqhd,bkhd->bhqk");
  attr_int(b.node("Softmax", {"scores"}, {"p"}), "axis", -1);
  attr_string(b.node("Einsum", {"p", "v"}, {"ctx"}), "equation", "bhqk, bkhd -> bqhd");
  b.initializer("w", random_tensor({4, 7}, 81, 0.5f));
  attr_string(b.node("Einsum", {"ctx", "w"}, {"proj"}), "equation", "bqhd,de");  // -> behq

  attr_string(b.node("Einsum", {"proj"}, {"t"}), "equation", "behq->ebhq");
  attr_string(b.node("Einsum", {"t"}, {"s"}), "equation", "ebhq->bq");
  b.output("t");
  b.output("s");
  const std::vector<std::string> ops = layer_ops(expect_host_matches_reference(b.bytes()));
  EXPECT_EQ(count(ops, "Einsum"), 0);
}

// Indexed copies with constant indices: in-place slice assignment as PyTorch exports it
// (ScatterND: BART's decoder-token shift, x[:, 1:] = ids[:, :-1] and x[:, 0] = start),
// ScatterElements, GatherElements and GatherND, negative indices among them. Each becomes
// one Gather by an element map; no scatter or gather-elements kernel runs.
TEST(DecomposedOps, ScattersAndGathersWithConstantIndices) {
  ModelBuilder b(13);
  b.input("x", graph::DataType::f32(), {2, 5});
  b.input("u", graph::DataType::f32(), {2, 4});
  // ScatterND: row 1's columns 1..4 and (with negative indices) row 0's column -5 = 0.
  b.initializer("nd_idx", HostTensor::from_i64(graph::DataType::i64(), {5, 2},
                                               {1, 1, 1, 2, 1, 3, 1, 4, -2, -5}));
  b.initializer("five", HostTensor::i64_vector({5}));
  b.initializer("row0", HostTensor::i64_vector({0}));
  b.initializer("row1", HostTensor::i64_vector({1}));
  b.initializer("zero", HostTensor::i64_vector({0}));
  b.initializer("one", HostTensor::i64_vector({1}));
  b.node("Slice", {"x", "row0", "row1", "zero"}, {"x0"});  // [1, 5]
  b.node("Reshape", {"x0", "five"}, {"upd"});              // [5]: one value per tuple
  b.node("ScatterND", {"x", "nd_idx", "upd"}, {"scattered"});
  // ScatterElements along axis 1 and GatherElements along axis 0.
  b.initializer("el_idx", HostTensor::from_i64(graph::DataType::i64(), {2, 2}, {4, 0, -1, 2}));
  b.initializer("two", HostTensor::i64_vector({2}));
  b.node("Slice", {"u", "zero", "two", "one"}, {"u2"});  // [2, 2]
  attr_int(b.node("ScatterElements", {"scattered", "el_idx", "u2"}, {"se"}), "axis", 1);
  b.initializer("ge_idx", HostTensor::from_i64(graph::DataType::i64(), {3, 5},
                                               {1, 0, 1, 0, 1, 0, 0, 0, 1, 1, -1, -2, 1, 0, 0}));
  attr_int(b.node("GatherElements", {"se", "ge_idx"}, {"ge"}), "axis", 0);
  // GatherND: rows of ge picked by index tuples.
  b.initializer("gnd_idx", HostTensor::from_i64(graph::DataType::i64(), {2, 1}, {2, 0}));
  b.node("GatherND", {"ge", "gnd_idx"}, {"y"});
  b.output("y");
  const std::vector<std::string> ops = layer_ops(expect_host_matches_reference(b.bytes()));
  for (const char* op : {"ScatterND", "ScatterElements", "GatherElements", "GatherND"})
    EXPECT_EQ(count(ops, op), 0) << op;
  EXPECT_EQ(count(ops, "Gather"), 4);
  std::string skip = expect_arm_neon_matches_reference(b.bytes());
  if (!skip.empty()) GTEST_SKIP() << skip;
}

// BiT's weight standardisation: BatchNormalization in training mode over a reshaped weight
// (the batch's own statistics) folds at compile time, and the Conv runs on its result.
TEST(DecomposedOps, TrainingModeBatchNormOfWeightsFolds) {
  ModelBuilder b(15);
  b.input("x", graph::DataType::f32(), {1, 3, 6, 6});
  b.initializer("w", random_tensor({4, 3, 3, 3}, 90, 1.0f));
  b.initializer("flat", HostTensor::i64_vector({1, 4, 27}));
  b.node("Reshape", {"w", "flat"}, {"w_rows"});
  b.initializer("ones", f32_tensor({4}, {1, 1, 1, 1}));
  b.initializer("zeros", f32_tensor({4}, {0, 0, 0, 0}));
  auto& bn = b.node("BatchNormalization", {"w_rows", "ones", "zeros", "zeros", "ones"},
                    {"w_std", "running_mean", "running_var"});
  attr_int(bn, "training_mode", 1);
  b.initializer("shape", HostTensor::i64_vector({4, 3, 3, 3}));
  b.node("Reshape", {"w_std", "shape"}, {"w4"});
  b.node("Conv", {"x", "w4"}, {"y"});
  b.output("y");
  const std::vector<std::string> ops = layer_ops(expect_host_matches_reference(b.bytes()));
  EXPECT_EQ(count(ops, "Conv"), 1);
  EXPECT_EQ(count(ops, "BatchNormalization"), 0);
}

// An output that is a constant once shapes are bound (DETR's reference points) is copied
// into its buffer; the other outputs are computed as usual.
TEST(DecomposedOps, ConstantOutputIsCopied) {
  ModelBuilder b(13);
  b.input("x", graph::DataType::f32(), {"batch", 3});
  b.initializer("queries", random_tensor({4, 2}, 91, 2.0f));
  b.node("Sigmoid", {"queries"}, {"points"});
  b.node("Relu", {"x"}, {"y"});
  b.output("y");
  b.output("points");
  const std::vector<std::string> ops =
      layer_ops(expect_host_matches_reference(b.bytes(), {{"batch", {2}}}));
  EXPECT_EQ(count(ops, "Identity"), 1);
}

// The activations of YOLOv4 (Mish, which fuse_self_gated makes of Softplus, Tanh and Mul),
// self-normalising networks (Selu, Elu, Celu) and the rounding functions, on inputs spread over
// several integers.
TEST(ElementwiseOps, SoftplusMishEluFamilyAndRounding) {
  ModelBuilder b(13);
  b.input("x", graph::DataType::f32(), {3, 5, 7});
  b.initializer("spread", f32_tensor({}, {4.5}));
  b.node("Mul", {"x", "spread"}, {"w"});
  b.node("Softplus", {"w"}, {"a"});
  b.node("Tanh", {"a"}, {"ta"});
  b.node("Mul", {"w", "ta"}, {"mish"});  // x tanh(softplus(x)), as exporters write Mish
  b.node("Softplus", {"w"}, {"sp"});     // and Softplus on its own
  attr_float(b.node("Elu", {"w"}, {"e"}), "alpha", 0.5f);
  b.node("Selu", {"e"}, {"s"});
  attr_float(b.node("Celu", {"s"}, {"c"}), "alpha", 2.0f);
  b.node("Softsign", {"c"}, {"ss"});
  attr_float(b.node("ThresholdedRelu", {"w"}, {"tr"}), "alpha", 0.5f);
  b.node("Floor", {"w"}, {"fl"});
  b.node("Ceil", {"w"}, {"ce"});
  b.node("Round", {"w"}, {"ro"});
  b.node("Sign", {"w"}, {"sg"});
  b.node("Sum", {"mish", "sp", "ss", "tr", "fl", "ce", "ro", "sg"}, {"y"});
  b.output("y");
  b.output("fl");
  b.output("ro");
  const std::vector<std::string> ops = layer_ops(expect_host_matches_reference(b.bytes()));
  for (const char* op : {"Mish", "Softplus", "Elu", "Selu", "Celu", "Softsign", "ThresholdedRelu",
                         "Floor", "Ceil", "Round", "Sign"})
    EXPECT_EQ(count(ops, op), 1) << op;
  std::string skip = expect_arm_neon_matches_reference(b.bytes());
  if (!skip.empty()) GTEST_SKIP() << skip;
}

}  // namespace
}  // namespace kiln::network::test
