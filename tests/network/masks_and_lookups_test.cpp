// What transformers and detection heads need beyond f32 arithmetic: int64 and bool model
// inputs (token ids, attention masks), embedding lookups (Gather of computed indices),
// comparisons and Not producing truth values, Where with a computed condition, and Slice with
// negative steps (a flip). Small models built here, compiled for the host and compared with
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
