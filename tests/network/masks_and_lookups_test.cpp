// What transformers and detection heads need beyond f32 arithmetic: int64 and bool model
// inputs (token ids, attention masks), embedding lookups (Gather of computed indices),
// comparisons and Not producing truth values, Where with a computed condition, Slice with
// negative steps (a flip), and integer arithmetic on positions and boxes (CumSum, ArgMax,
// +, -, *, truncating /). Small models built here, compiled for the host and compared with
// the graph's reference evaluator. (The ONNX node tests of these operators run on arm-neon
// under qemu in tests/network/conformance.)
#include <gtest/gtest.h>

#include <limits>

#include "tests/network/network_check.h"
#include "tests/network/test_models.h"

namespace kiln::network::test {
namespace {

using graph::DataType;
using graph::HostTensor;
using graph::test::f32_tensor;
using graph::test::ModelBuilder;
using graph::test::random_tensor;

std::vector<std::string> templates_of(const CompileReport& r) {
  std::vector<std::string> out;
  for (const LayerRow& l : r.layers) out.push_back(l.tpl);
  return out;
}

bool has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

TEST(MasksAndLookups, EmbeddingLookupOfInt64TokenIds) {
  ModelBuilder b(13);
  b.input("ids", DataType::i64(), {2, 5});
  b.initializer("table", random_tensor({11, 24}, 1));
  b.node("Gather", {"table", "ids"}, {"emb"});
  b.initializer("pos", random_tensor({5, 24}, 2));
  b.node("Add", {"emb", "pos"}, {"y"});
  b.output("y");
  // Negative ids count from the end, as ONNX's Gather.
  HostTensor ids = HostTensor::from_i64(DataType::i64(), {2, 5}, {0, 3, 10, -1, 7, 2, 2, 5, 9, -11});
  CompileReport r = expect_host_matches_reference(b.bytes(), {}, {{"ids", ids}});
  EXPECT_TRUE(has(templates_of(r), "gather.rows"));
  EXPECT_TRUE(has(templates_of(r), "cast.flat"));  // the int64 ids converted once
}

TEST(MasksAndLookups, ConstantIndicesThatDoNotStepEvenlyGather) {
  ModelBuilder b(13);
  b.input("x", DataType::f32(), {4, 6});
  b.initializer("i", HostTensor::i64_vector({3, 0, 3}));
  b.node("Gather", {"x", "i"}, {"y"}, "odd_gather");
  b.output("y");
  EXPECT_TRUE(has(templates_of(expect_host_matches_reference(b.bytes())), "gather.rows"));
}

// Integer arithmetic as text and document models export it, on int64 inputs:
// RoBERTa's positions (CumSum of the mask, times the mask, plus the padding index) looked
// up in a table; LayoutLM's box widths and heights (differences of coordinates), divided
// with truncation toward zero (negative quotients included); CLIP's pooled token at ArgMax of
// the ids; the mask's ReduceSum and the ids' ReduceMin.
TEST(MasksAndLookups, IntegerArithmeticOnPositionsBoxesAndTokenIds) {
  auto i64 = [](std::vector<int64_t> shape, std::vector<int64_t> v) {
    return HostTensor::from_i64(DataType::i64(), std::move(shape), std::move(v));
  };
  ModelBuilder b(13);
  b.input("ids", DataType::i64(), {2, 6});
  b.input("mask", DataType::i64(), {2, 6});
  b.input("bbox", DataType::i64(), {2, 6, 4});
  b.initializer("axis1", i64({}, {1}));
  b.node("CumSum", {"mask", "axis1"}, {"run"});
  b.node("Mul", {"run", "mask"}, {"masked_run"});
  b.initializer("one", i64({}, {1}));
  b.node("Add", {"masked_run", "one"}, {"positions"});
  b.initializer("pos_table", random_tensor({8, 16}, 1));
  b.node("Gather", {"pos_table", "positions"}, {"pos_emb"});  // [2, 6, 16]
  b.initializer("x1", i64({}, {2}));
  b.initializer("x0", i64({}, {0}));
  auto& right = b.node("Gather", {"bbox", "x1"}, {"right"});
  graph::test::attr_int(right, "axis", 2);
  auto& left = b.node("Gather", {"bbox", "x0"}, {"left"});
  graph::test::attr_int(left, "axis", 2);
  b.node("Sub", {"right", "left"}, {"width"});  // negative for the flipped boxes
  b.initializer("three", i64({}, {3}));
  b.node("Div", {"width", "three"}, {"third"});
  auto& cast = b.node("Cast", {"third"}, {"third_f"});
  graph::test::attr_int(cast, "to", 1);
  b.node("Abs", {"width"}, {"abs_width"});
  b.initializer("width_table", random_tensor({10, 16}, 2));
  b.node("Gather", {"width_table", "abs_width"}, {"width_emb"});
  b.node("Add", {"pos_emb", "width_emb"}, {"emb"});  // [2, 6, 16]
  auto& eos = b.node("ArgMax", {"ids"}, {"eos"});
  graph::test::attr_int(eos, "axis", -1);
  graph::test::attr_int(eos, "keepdims", 0);
  b.initializer("row_starts", i64({2}, {0, 6}));
  b.node("Add", {"row_starts", "eos"}, {"flat_eos"});
  b.initializer("flat_shape", HostTensor::i64_vector({12, 16}));
  b.node("Reshape", {"emb", "flat_shape"}, {"flat_emb"});
  b.node("Gather", {"flat_emb", "flat_eos"}, {"pooled"});  // [2, 16]
  b.initializer("axes1", HostTensor::i64_vector({1}));
  b.node("ReduceSum", {"mask", "axes1"}, {"lengths"});
  auto& low = b.node("ReduceMin", {"ids"}, {"lowest"});
  graph::test::attr_int(low, "keepdims", 0);
  b.node("Sub", {"lengths", "lowest"}, {"lengths_minus_lowest"});
  b.output("emb");
  b.output("third_f");
  b.output("pooled");
  b.output("lengths_minus_lowest");
  HostTensor ids = i64({2, 6}, {5, 9, 2, 9, 0, 0, 7, 1, 3, 3, 8, 4});
  HostTensor mask = i64({2, 6}, {1, 1, 1, 1, 0, 0, 1, 1, 1, 1, 1, 1});
  std::vector<int64_t> boxes;
  for (int64_t i = 0; i < 12; ++i) {
    const int64_t x0 = i % 4, x1 = i % 3 == 0 ? x0 - 1 - i % 5 : x0 + i % 7;  // some flipped
    for (int64_t v : {x0, 2 * i, x1, 2 * i + 3}) boxes.push_back(v);
  }
  CompileReport r = expect_host_matches_reference(
      b.bytes(), {}, {{"ids", ids}, {"mask", mask}, {"bbox", i64({2, 6, 4}, boxes)}});
  for (const char* t : {"cumsum.rows", "arg.rows.arg_max", "reduce.rows.reduce_min"})
    EXPECT_TRUE(has(templates_of(r), t)) << t;
}

// BERT's padding mask: Equal(mask, 0) on an int64 input, broadcast over heads and queries,
// selects -inf before the softmax (the arithmetic form mask * -inf would give NaN).
TEST(MasksAndLookups, AttentionMaskSelectsMinusInfinity) {
  ModelBuilder b(13);
  b.input("scores", DataType::f32(), {1, 2, 4, 4});
  b.input("mask", DataType::i64(), {1, 4});
  b.initializer("zero", HostTensor::from_i64(DataType::i64(), {}, {0}));
  b.node("Equal", {"mask", "zero"}, {"pad"});
  b.initializer("axes", HostTensor::i64_vector({1, 2}));
  b.node("Unsqueeze", {"pad", "axes"}, {"pad4"});
  b.initializer("minus_inf", f32_tensor({}, {-std::numeric_limits<double>::infinity()}));
  b.node("Where", {"pad4", "minus_inf", "scores"}, {"masked"});
  auto& sm = b.node("Softmax", {"masked"}, {"p"});
  graph::test::attr_int(sm, "axis", -1);
  b.output("p");
  HostTensor mask = HostTensor::from_i64(DataType::i64(), {1, 4}, {1, 1, 0, 1});
  CompileReport r = expect_host_matches_reference(b.bytes(), {}, {{"mask", mask}});
  EXPECT_TRUE(has(templates_of(r), "elementwise.flat.where"));
  EXPECT_TRUE(has(templates_of(r), "elementwise.flat.equal"));
}

// A bool input, Not, and comparisons of computed values choosing between two tensors.
TEST(MasksAndLookups, BoolInputNotAndComparisonsFeedWhere) {
  ModelBuilder b(13);
  b.input("keep", DataType::boolean(), {2, 3});
  b.input("x", DataType::f32(), {2, 3});
  b.input("y", DataType::f32(), {2, 3});
  b.node("Not", {"keep"}, {"drop"});
  b.node("Where", {"drop", "x", "y"}, {"chosen"});
  b.node("Less", {"x", "y"}, {"lt"});
  b.node("Where", {"lt", "x", "y"}, {"smaller"});
  b.node("Greater", {"x", "y"}, {"gt"});
  b.node("Where", {"gt", "chosen", "smaller"}, {"z"});
  b.output("z");
  HostTensor keep = HostTensor::from_i64(DataType::boolean(), {2, 3}, {1, 0, 0, 1, 1, 0});
  CompileReport r = expect_host_matches_reference(b.bytes(), {}, {{"keep", keep}});
  EXPECT_TRUE(has(templates_of(r), "elementwise.flat.not"));
}

TEST(MasksAndLookups, NegativeSliceStepsFlip) {
  ModelBuilder b(13);
  b.input("x", DataType::f32(), {2, 7, 3});
  b.initializer("starts", HostTensor::i64_vector({-1, 2}));
  b.initializer("ends", HostTensor::i64_vector({std::numeric_limits<int64_t>::min(), 0}));
  b.initializer("axes", HostTensor::i64_vector({1, 2}));
  b.initializer("steps", HostTensor::i64_vector({-2, -1}));
  b.node("Slice", {"x", "starts", "ends", "axes", "steps"}, {"y"}, "flip");
  b.output("y");
  expect_host_matches_reference(b.bytes());
}

}  // namespace
}  // namespace kiln::network::test
