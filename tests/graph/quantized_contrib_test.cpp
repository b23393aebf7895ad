// ONNX Runtime's com.microsoft quantized operators (compiler/graph/ops/quantized_contrib.h):
// imported from their domain, QLinearAdd's fixed point as ONNX Runtime's kernel rounds it
// (checked against the kernel's own mask-and-threshold form over every pair of 8-bit inputs),
// its rounding="float" form as the QDQ chain's f32 steps, and what kiln refuses named.
#include "compiler/graph/ops/quantized_contrib.h"

#include <gtest/gtest.h>

#include <cmath>

#include "compiler/graph/evaluate.h"
#include "compiler/graph/onnx_import.h"
#include "compiler/graph/passes/pipeline.h"
#include "tests/graph/model_builder.h"
#include "tests/test_util.h"

namespace kiln::graph {
namespace {

using test::ModelBuilder;

// a, b (u8 [n]) -> QLinearAdd(0.05 around 110, 0.03 around 120 -> 0.1 around 3) -> y.
ModelBuilder qlinear_add(int64_t n, const std::string& rounding = "") {
  ModelBuilder b;
  b.input("a", DataType::u8(), {n});
  b.input("b", DataType::u8(), {n});
  b.initializer("sa", test::f32_tensor({}, {0.05}));
  b.initializer("za", HostTensor::from_i64(DataType::u8(), {}, {110}));
  b.initializer("sb", test::f32_tensor({}, {0.03}));
  b.initializer("zb", HostTensor::from_i64(DataType::u8(), {}, {120}));
  b.initializer("sy", test::f32_tensor({}, {0.1}));
  b.initializer("zy", HostTensor::from_i64(DataType::u8(), {}, {3}));
  auto& add = b.node("QLinearAdd", {"a", "sa", "za", "b", "sb", "zb", "sy", "zy"}, {"y"}, "add");
  add.set_domain("com.microsoft");
  if (!rounding.empty()) test::attr_string(add, "rounding", rounding);
  b.output("y");
  return b;
}

// Every (a, b) pair of u8 values.
std::map<std::string, HostTensor> all_pairs() {
  std::vector<int64_t> a, b;
  for (int64_t i = 0; i < 256; ++i)
    for (int64_t j = 0; j < 256; ++j) a.push_back(i), b.push_back(j);
  return {{"a", HostTensor::from_i64(DataType::u8(), {65536}, a)},
          {"b", HostTensor::from_i64(DataType::u8(), {65536}, b)}};
}

std::vector<int64_t> run(const ModelBuilder& b, const std::map<std::string, HostTensor>& in) {
  Graph g = import_onnx_bytes(b.bytes(), "m.onnx");
  run_graph_passes(g);
  return evaluate(g, in).at("y").to_i64();
}

TEST(QuantizedContrib, QLinearAddRoundsAsOnnxRuntimesKernel) {
  const std::optional<FixedPointAdd> f = qlinear_add_fixed_point(0.05, 0.03, 0.1);
  ASSERT_TRUE(f.has_value());
  // The greater ratio 0.5 has exponent -1: 22 bits at shift 22.
  EXPECT_EQ(f->shift, 22);
  EXPECT_EQ(f->a_mult, 1 << 21);
  const std::vector<int64_t> y = run(qlinear_add(65536), all_pairs());
  // The kernel's form: an arithmetic shift, plus one where the remainder (less one for a
  // negative sum) passes half.
  const int64_t mask = (int64_t{1} << f->shift) - 1, threshold = mask >> 1;
  int64_t ties = 0;
  for (int64_t a = 0; a < 256; ++a)
    for (int64_t b = 0; b < 256; ++b) {
      const int32_t acc = static_cast<int32_t>(f->a_mult * (a - 110) + f->b_mult * (b - 120));
      const int32_t rem = (acc & mask) - (acc < 0 ? 1 : 0);
      const int64_t q = (acc >> f->shift) + (rem > threshold ? 1 : 0);
      ASSERT_EQ(y[a * 256 + b], std::clamp<int64_t>(q + 3, 0, 255)) << a << " + " << b;
      ties += (acc & mask) == (mask + 1) / 2;
    }
  EXPECT_GT(ties, 0) << "no sum fell on a rounding tie: the rounding went untested";
}

TEST(QuantizedContrib, QLinearAddWithFloatRoundingIsTheQdqChain) {
  const std::vector<int64_t> y = run(qlinear_add(65536, "float"), all_pairs());
  int64_t differs_from_fixed = 0;
  const std::vector<int64_t> fixed = run(qlinear_add(65536), all_pairs());
  for (int64_t a = 0; a < 256; ++a)
    for (int64_t b = 0; b < 256; ++b) {
      const float fa = static_cast<float>(a - 110) * 0.05f,
                  fb = static_cast<float>(b - 120) * 0.03f;
      const float sum = fa + fb;
      const int64_t q = static_cast<int64_t>(std::nearbyint(double(sum / 0.1f)));
      ASSERT_EQ(y[a * 256 + b], std::clamp<int64_t>(q + 3, 0, 255)) << a << " + " << b;
      differs_from_fixed += y[a * 256 + b] != fixed[a * 256 + b];
    }
  // Ties round to even in f32 and away from zero in fixed point.
  EXPECT_GT(differs_from_fixed, 0);
}

TEST(QuantizedContrib, UnknownContribOperatorsAndChannelsLastAreNamed) {
  ModelBuilder b;
  b.input("x", DataType::u8(), {1, 2, 3, 3});
  b.initializer("s", test::f32_tensor({}, {0.1}));
  b.initializer("z", HostTensor::from_i64(DataType::u8(), {}, {0}));
  auto& pool = b.node("QLinearGlobalAveragePool", {"x", "s", "z", "s", "z"}, {"y"}, "gap");
  pool.set_domain("com.microsoft");
  test::attr_int(pool, "channels_last", 1);
  b.output("y");
  std::string msg = kiln::test::user_error_of([&] {
    Graph g = import_onnx_bytes(b.bytes(), "m.onnx");
    run_graph_passes(g);
  });
  EXPECT_NE(msg.find("channels_last"), std::string::npos) << msg;
  EXPECT_NE(msg.find("gap"), std::string::npos) << msg;

  ModelBuilder c;
  c.input("x", DataType::f32(), {4});
  c.node("FusedGemm", {"x"}, {"y"}, "fg").set_domain("com.microsoft");
  c.output("y");
  msg = kiln::test::user_error_of([&] { import_onnx_bytes(c.bytes(), "m.onnx"); });
  EXPECT_NE(msg.find("FusedGemm"), std::string::npos) << msg;
  EXPECT_NE(msg.find("QLinearSigmoid"), std::string::npos) << msg;  // the ones kiln reads
}

}  // namespace
}  // namespace kiln::graph
