// check_batch_separable on small models imported twice, with the batch bound to 2 and to 3:
// networks that compute each sample on its own pass (and say which inputs carry the batch);
// each way of mixing samples is refused with a message naming the node and the reason.
#include "compiler/graph/batch_separable.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>

#include "compiler/graph/bind.h"
#include "compiler/graph/onnx_import.h"
#include "compiler/graph/passes/pipeline.h"
#include "tests/graph/model_builder.h"

namespace kiln::graph {
namespace {

using test::attr_int;
using test::attr_ints;
using test::ModelBuilder;
using testing::HasSubstr;

const test::DimSpec kBatch = std::string("batch");

Graph compiled_at(const ModelBuilder& b, int64_t batch) {
  Graph g = import_onnx_bytes(b.bytes(), "m.onnx");
  bind_input_shapes(g, {{"batch", {batch}}});
  run_graph_passes(g);
  return g;
}

std::vector<bool> check(const ModelBuilder& b) {
  return check_batch_separable(compiled_at(b, 2), compiled_at(b, 3), "batch");
}

// The refusal's message, or "accepted".
std::string refusal(const Graph& at2, const Graph& at3) {
  try {
    check_batch_separable(at2, at3, "batch");
  } catch (const UserError& e) {
    return e.what();
  }
  return "accepted";
}
std::string refusal(const ModelBuilder& b) {
  return refusal(compiled_at(b, 2), compiled_at(b, 3));
}

HostTensor i64s(const std::vector<int64_t>& v) {
  return HostTensor::i64_vector(v);
}

// x[batch,4] -> <op>(x, extra inputs) -> y.
ModelBuilder one_node(const std::string& op, std::vector<std::string> inputs = {"x"},
                      const std::vector<int64_t>& x_dims = {4}) {
  ModelBuilder b;
  std::vector<test::DimSpec> dims{kBatch};
  for (int64_t d : x_dims) dims.push_back(d);
  b.input("x", DataType::f32(), dims);
  b.node(op, inputs, {"y"}, "the_" + op);
  b.output("y");
  return b;
}
onnx::NodeProto& first_node(ModelBuilder& b) {
  return *b.model.mutable_graph()->mutable_node(0);
}

TEST(BatchSeparable, CnnPasses) {
  ModelBuilder b;
  b.input("x", DataType::f32(), {kBatch, int64_t{3}, int64_t{8}, int64_t{8}});
  b.initializer("w", test::random_tensor({4, 3, 3, 3}, 1));
  b.initializer("bias", test::random_tensor({4}, 2));
  b.initializer("fc_w", test::random_tensor({10, 4}, 3));
  b.initializer("fc_b", test::random_tensor({10}, 4));
  attr_ints(b.node("Conv", {"x", "w", "bias"}, {"c"}), "pads", {1, 1, 1, 1});
  b.node("Relu", {"c"}, {"r"});
  b.node("GlobalAveragePool", {"r"}, {"p"});
  b.node("Flatten", {"p"}, {"f"});
  attr_int(b.node("Gemm", {"f", "fc_w", "fc_b"}, {"y"}), "transB", 1);
  b.output("y");
  EXPECT_EQ(check(b), std::vector<bool>{true});
}

// Self-attention over x[batch,4,8] with two heads of 4, an unbatched additive mask[1,1,4,4] and
// a residual LayerNormalization. The query is split into heads by a Reshape whose target comes
// from Shape(x) (folded to a constant that differs with the batch), the key and value by
// constants with 0 and -1.
TEST(BatchSeparable, AttentionBlockPassesAndMaskIsShared) {
  ModelBuilder b(17);  // LayerNormalization
  b.input("x", DataType::f32(), {kBatch, int64_t{4}, int64_t{8}});
  b.input("mask", DataType::f32(), {int64_t{1}, int64_t{1}, int64_t{4}, int64_t{4}});
  for (const char* w : {"wq", "wk", "wv"}) b.initializer(w, test::random_tensor({8, 8}, w[1]));
  b.initializer("zero", HostTensor::from_i64(DataType::i64(), {}, {0}));
  b.initializer("axes0", i64s({0}));
  b.initializer("heads", i64s({4, 2, 4}));
  b.initializer("k_shape", i64s({0, 4, 2, 4}));
  b.initializer("v_shape", i64s({-1, 4, 2, 4}));
  b.initializer("out_shape", i64s({0, 0, -1}));
  b.initializer("scale", HostTensor::from_f64(DataType::f32(), {}, {0.5}));
  b.initializer("gamma", test::random_tensor({8}, 5));
  b.initializer("beta", test::random_tensor({8}, 6));
  b.node("MatMul", {"x", "wq"}, {"q"});
  b.node("MatMul", {"x", "wk"}, {"k"});
  b.node("MatMul", {"x", "wv"}, {"v"});
  b.node("Shape", {"x"}, {"x_shape"});
  attr_int(b.node("Gather", {"x_shape", "zero"}, {"n"}), "axis", 0);
  b.node("Unsqueeze", {"n", "axes0"}, {"n1"});
  attr_int(b.node("Concat", {"n1", "heads"}, {"q_shape"}), "axis", 0);
  b.node("Reshape", {"q", "q_shape"}, {"q4"});
  b.node("Reshape", {"k", "k_shape"}, {"k4"});
  b.node("Reshape", {"v", "v_shape"}, {"v4"});
  attr_ints(b.node("Transpose", {"q4"}, {"qt"}), "perm", {0, 2, 1, 3});
  attr_ints(b.node("Transpose", {"k4"}, {"kt"}), "perm", {0, 2, 3, 1});
  attr_ints(b.node("Transpose", {"v4"}, {"vt"}), "perm", {0, 2, 1, 3});
  b.node("MatMul", {"qt", "kt"}, {"scores"});
  b.node("Mul", {"scores", "scale"}, {"scaled"});
  b.node("Add", {"scaled", "mask"}, {"masked"});
  attr_int(b.node("Softmax", {"masked"}, {"attn"}), "axis", -1);
  b.node("MatMul", {"attn", "vt"}, {"ctx"});
  attr_ints(b.node("Transpose", {"ctx"}, {"ctx_t"}), "perm", {0, 2, 1, 3});
  b.node("Reshape", {"ctx_t", "out_shape"}, {"merged"});
  b.node("Add", {"merged", "x"}, {"res"});
  attr_int(b.node("LayerNormalization", {"res", "gamma", "beta"}, {"y"}), "axis", -1);
  b.output("y");
  EXPECT_EQ(check(b), (std::vector<bool>{true, false}));
}

// An embedding lookup of batched ids, a class token expanded to the batch through Shape (folded
// to a constant with the same rows for every sample), and a Slice that keeps axis 0 whole.
TEST(BatchSeparable, EmbeddingExpandedTokenAndWholeSlicePass) {
  ModelBuilder b;
  b.input("ids", DataType::i64(), {kBatch, int64_t{3}});
  b.initializer("table", test::random_tensor({10, 4}, 7));
  b.initializer("cls", test::random_tensor({1, 1, 4}, 8));
  b.initializer("zero", HostTensor::from_i64(DataType::i64(), {}, {0}));
  b.initializer("axes0", i64s({0}));
  b.initializer("tail", i64s({1, 4}));
  b.initializer("starts", i64s({0, 1}));
  b.initializer("ends", i64s({std::numeric_limits<int64_t>::max(), 4}));
  b.initializer("axes01", i64s({0, 1}));
  b.node("Gather", {"table", "ids"}, {"emb"});
  b.node("Shape", {"ids"}, {"ids_shape"});
  b.node("Gather", {"ids_shape", "zero"}, {"n"});
  b.node("Unsqueeze", {"n", "axes0"}, {"n1"});
  attr_int(b.node("Concat", {"n1", "tail"}, {"cls_shape"}), "axis", 0);
  b.node("Expand", {"cls", "cls_shape"}, {"cls_b"});
  attr_int(b.node("Concat", {"cls_b", "emb"}, {"tokens"}), "axis", 1);
  b.node("Slice", {"tokens", "starts", "ends", "axes01"}, {"y"});
  b.output("y");
  EXPECT_EQ(check(b), std::vector<bool>{true});
}

// Shapes taken from x and folded to constants that differ with the batch: a shared mask
// expanded to [batch,4] (every sample gets the same rows) and a Slice of x that ends at its
// batch size (axis 0 kept whole).
TEST(BatchSeparable, ShapesFoldedFromTheBatchPass) {
  ModelBuilder b;
  b.input("x", DataType::f32(), {kBatch, int64_t{4}});
  b.input("m", DataType::f32(), {int64_t{1}, int64_t{4}});
  b.initializer("zero", HostTensor::from_i64(DataType::i64(), {}, {0}));
  b.initializer("starts", i64s({0}));
  b.initializer("axes0", i64s({0}));
  b.initializer("four", i64s({4}));
  b.node("Shape", {"x"}, {"x_shape"});
  b.node("Gather", {"x_shape", "zero"}, {"n"});
  b.node("Unsqueeze", {"n", "axes0"}, {"n1"});
  attr_int(b.node("Concat", {"n1", "four"}, {"m_shape"}), "axis", 0);
  b.node("Expand", {"m", "m_shape"}, {"m_b"});
  b.node("Slice", {"x", "starts", "n1", "axes0"}, {"xs"});
  b.node("Add", {"xs", "m_b"}, {"y"});
  b.output("y");
  EXPECT_EQ(check(b), (std::vector<bool>{true, false}));
}

TEST(BatchSeparable, ReportsInputWithoutTheBatchAsShared) {
  ModelBuilder b = one_node("Mul", {"x", "m"});
  b.input("m", DataType::f32(), {int64_t{1}, int64_t{4}});
  EXPECT_EQ(check(b), (std::vector<bool>{true, false}));

  // An output computed from the shared input alone cannot be split into samples.
  b.node("Relu", {"m"}, {"shared"});
  b.output("shared");
  EXPECT_THAT(refusal(b), HasSubstr("graph output 'shared' is [1,4] at batch 2 and [1,4] at "
                                    "batch 3, without 'batch' on axis 0"));
}

TEST(BatchSeparable, RefusesReductionOverTheBatch) {
  ModelBuilder b = one_node("ReduceMean");
  attr_ints(first_node(b), "axes", {0});
  EXPECT_THAT(refusal(b),
              HasSubstr("cannot run a ranged batch sample by sample: m.onnx: node 0 "
                        "'the_ReduceMean' (ReduceMean) reduces over axis 0, the batch"));

  // keepdims=0 over every axis leaves a scalar output.
  ModelBuilder all = one_node("ReduceSum");
  attr_int(first_node(all), "keepdims", 0);
  EXPECT_THAT(refusal(all), HasSubstr("(ReduceSum) reduces over every axis, the batch included"));

  // Over axis 1 each sample is reduced on its own.
  ModelBuilder rows = one_node("ReduceMean");
  attr_ints(first_node(rows), "axes", {-1});
  EXPECT_EQ(check(rows), std::vector<bool>{true});
}

TEST(BatchSeparable, RefusesTransposeThatMovesTheBatch) {
  ModelBuilder b = one_node("Transpose");
  attr_ints(first_node(b), "perm", {1, 0});
  EXPECT_THAT(refusal(b), HasSubstr("(Transpose) moves the batch off axis 0 (perm[0] = 1)"));
}

TEST(BatchSeparable, RefusesMatMulOfBatchedOperandsThatPairsSamples) {
  // v[batch] @ w[batch,5] contracts over the batch.
  ModelBuilder vec = one_node("MatMul", {"x", "w"}, {});
  vec.input("w", DataType::f32(), {kBatch, int64_t{5}});
  EXPECT_THAT(refusal(vec), HasSubstr("(MatMul) multiplies batched 'x' (rank 1) by batched 'w' "
                                      "(rank 2), which pairs samples with each other"));

  // x[batch,4] @ w[batch,4,5] multiplies every sample's row by every sample's matrix.
  ModelBuilder stack = one_node("MatMul", {"x", "w"});
  stack.input("w", DataType::f32(), {kBatch, int64_t{4}, int64_t{5}});
  EXPECT_THAT(refusal(stack), HasSubstr("(MatMul) multiplies batched 'x' (rank 2) by batched 'w' "
                                        "(rank 3), which pairs samples with each other"));

  // A shared matrix a[3,4] times each sample's x[4,5] keeps samples apart.
  ModelBuilder left = one_node("MatMul", {"a", "x"}, {4, 5});
  left.input("a", DataType::f32(), {int64_t{3}, int64_t{4}});
  EXPECT_EQ(check(left), (std::vector<bool>{true, false}));
}

TEST(BatchSeparable, RefusesSoftmaxOverTheBatch) {
  ModelBuilder b = one_node("Softmax");
  attr_int(first_node(b), "axis", 0);
  EXPECT_THAT(refusal(b), HasSubstr("(Softmax) works along axis 0, the batch"));
}

TEST(BatchSeparable, RefusesDynamicQuantizeLinear) {
  ModelBuilder b;
  b.input("x", DataType::f32(), {kBatch, int64_t{4}});
  b.node("DynamicQuantizeLinear", {"x"}, {"y", "scale", "zp"}, "dq");
  b.output("y");
  EXPECT_THAT(refusal(b), HasSubstr("'dq' (DynamicQuantizeLinear) computes one quantization scale "
                                    "over the whole tensor, across samples"));
}

// Concat on axis 0 gives [4,4] and [6,4], which looks batched: only the rule catches it.
TEST(BatchSeparable, RefusesConcatOnTheBatch) {
  ModelBuilder b = one_node("Concat", {"x", "x"});
  attr_int(first_node(b), "axis", 0);
  EXPECT_THAT(refusal(b), HasSubstr("(Concat) concatenates along axis 0, the batch"));
}

TEST(BatchSeparable, RefusesSliceAndGatherThatPickSamples) {
  ModelBuilder slice = one_node("Slice", {"x", "starts", "ends", "axes"});
  slice.initializer("starts", i64s({1}));
  slice.initializer("ends", i64s({std::numeric_limits<int64_t>::max()}));
  slice.initializer("axes", i64s({0}));
  EXPECT_THAT(refusal(slice), HasSubstr("(Slice) slices axis 0, the batch"));

  ModelBuilder gather = one_node("Gather", {"x", "i"});
  gather.initializer("i", i64s({0}));
  EXPECT_THAT(refusal(gather), HasSubstr("(Gather) gathers along axis 0, the batch"));
}

// Range(0, batch) folds to [0,1] and [0,1,2]: a constant the batch-1 program would not hold.
TEST(BatchSeparable, RefusesConstantFoldedFromTheBatchSize) {
  ModelBuilder b;
  b.input("x", DataType::f32(), {kBatch, int64_t{4}});
  b.initializer("zero", HostTensor::from_i64(DataType::i64(), {}, {0}));
  b.initializer("one", HostTensor::from_i64(DataType::i64(), {}, {1}));
  b.initializer("axes1", i64s({1}));
  b.node("Shape", {"x"}, {"x_shape"});
  b.node("Gather", {"x_shape", "zero"}, {"n"});
  b.node("Range", {"zero", "n", "one"}, {"r"});
  attr_int(b.node("Cast", {"r"}, {"rf"}), "to", 1);
  b.node("Unsqueeze", {"rf", "axes1"}, {"r2"});
  b.node("Add", {"x", "r2"}, {"y"}, "the_Add");
  b.output("y");
  EXPECT_THAT(refusal(b), HasSubstr("(Add) reads constant 'r2', whose value depends on the batch "
                                    "size and is not the same for every sample"));
}

TEST(BatchSeparable, RefusesInputWithTheBatchOffAxisZero) {
  ModelBuilder b;
  b.input("x", DataType::f32(), {int64_t{4}, kBatch});
  b.node("Relu", {"x"}, {"y"});
  b.output("y");
  EXPECT_THAT(refusal(b), HasSubstr("graph input 'x' is [4,2] at batch 2 and [4,3] at batch 3: "
                                    "'batch' must size axis 0 and nothing else"));
}

TEST(BatchSeparable, RefusesGraphsWhoseStructureDiffers) {
  EXPECT_THAT(refusal(compiled_at(one_node("Relu"), 2), compiled_at(one_node("Sigmoid"), 3)),
              HasSubstr("the graph's structure depends on the batch size (m.onnx: node 0 "
                        "'the_Relu' (Relu) differs)"));
}

// An operator the table does not know, on a batched input (built directly: every operator the
// importer accepts is in the table).
TEST(BatchSeparable, RefusesUnknownOperatorOnBatchedInput) {
  auto graph_at = [](int64_t batch) {
    Graph g;
    g.source = "m.onnx";
    g.inputs = {"x"};
    g.outputs = {"y"};
    g.types["x"] = ValueType::of(DataType::f32(), {batch, 4});
    g.types["y"] = ValueType::of(DataType::f32(), {batch, 4});
    g.nodes.push_back(Node{"odd", "Mystery", {"x"}, {"y"}, {}, 7, {}});
    return g;
  };
  EXPECT_THAT(refusal(graph_at(2), graph_at(3)),
              HasSubstr("node 7 'odd' (Mystery) is not known to compute each sample "
                        "independently"));
}

}  // namespace
}  // namespace kiln::graph
