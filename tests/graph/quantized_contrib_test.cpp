// ONNX Runtime's com.microsoft quantized operators (compiler/graph/ops/quantized_contrib.h):
// imported from their domain, QLinearAdd as ONNX Runtime's kernel rounds it (over every pair
// of 8-bit inputs, against the QDQ chain's own f32 steps too), and what kiln refuses named.
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
ModelBuilder qlinear_add(int64_t n) {
  ModelBuilder b;
  b.input("a", DataType::u8(), {n});
  b.input("b", DataType::u8(), {n});
  b.initializer("sa", test::f32_tensor({}, {0.05}));
  b.initializer("za", HostTensor::from_i64(DataType::u8(), {}, {110}));
  b.initializer("sb", test::f32_tensor({}, {0.03}));
  b.initializer("zb", HostTensor::from_i64(DataType::u8(), {}, {120}));
  b.initializer("sy", test::f32_tensor({}, {0.1}));
  b.initializer("zy", HostTensor::from_i64(DataType::u8(), {}, {3}));
  b.node("QLinearAdd", {"a", "sa", "za", "b", "sb", "zb", "sy", "zy"}, {"y"}, "add")
      .set_domain("com.microsoft");
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

// A fused multiply-add of f32 values, rounded once: the exact product and sum in double (an
// 8-bit integer times a 24-bit mantissa plus a small f32 stays within 53 bits here).
float fused(float x, float y, float z) {
  return static_cast<float>(double(x) * double(y) + double(z));
}

TEST(QuantizedContrib, QLinearAddRoundsAsOnnxRuntimesKernel) {
  const std::vector<int64_t> y = run(qlinear_add(65536), all_pairs());
  // MLAS's form on x86: ratios to the output scale, the zero points folded into one offset,
  // two fused steps, rounded half to even.
  const float ra = 0.05f / 0.1f, rb = 0.03f / 0.1f;
  const float offset = 3.0f - fused(ra, 110.0f, rb * 120.0f);
  int64_t ties = 0, differs_from_chain = 0;
  for (int64_t a = 0; a < 256; ++a)
    for (int64_t b = 0; b < 256; ++b) {
      const float v = fused(float(a), ra, fused(float(b), rb, offset));
      const int64_t q = static_cast<int64_t>(std::nearbyint(v));
      ASSERT_EQ(y[a * 256 + b], std::clamp<int64_t>(q, 0, 255)) << a << " + " << b;
      ties += v - std::floor(v) == 0.5f;
      // The QDQ chain's steps divide by y_scale: a few sums round the other way.
      const float chain = (float(a - 110) * 0.05f + float(b - 120) * 0.03f) / 0.1f;
      differs_from_chain += q != static_cast<int64_t>(std::nearbyint(chain)) + 3;
    }
  EXPECT_GT(ties, 0) << "no sum fell on a rounding tie: the rounding went untested";
  EXPECT_GT(differs_from_chain, 0);
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
