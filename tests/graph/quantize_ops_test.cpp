// The quantization operators' reference (compiler/graph/ops/quantize.cpp), beyond the ONNX
// node tests the conformance suite runs: rounding half to even and saturation at the edges,
// per-axis scales and zero points, and every bad scale or shape as one UserError naming the
// node.
#include <gtest/gtest.h>

#include "compiler/graph/evaluate.h"
#include "compiler/graph/onnx_import.h"
#include "compiler/graph/passes/pipeline.h"
#include "tests/graph/model_builder.h"
#include "tests/test_util.h"

namespace kiln::graph {
namespace {

using test::ModelBuilder;

HostTensor u8(const std::vector<int64_t>& shape, const std::vector<int64_t>& v) {
  return HostTensor::from_i64(DataType::u8(), shape, v);
}
HostTensor i8(const std::vector<int64_t>& shape, const std::vector<int64_t>& v) {
  return HostTensor::from_i64(DataType::i8(), shape, v);
}

// x[dims] -> QuantizeLinear(scale, zero) -> q -> DequantizeLinear(scale, zero) -> y.
ModelBuilder qdq(const std::vector<int64_t>& dims, const HostTensor& scale, const HostTensor& zero,
                 int64_t axis = 1) {
  ModelBuilder b;
  std::vector<test::DimSpec> d(dims.begin(), dims.end());
  b.input("x", DataType::f32(), d);
  b.initializer("scale", scale);
  b.initializer("zero", zero);
  test::attr_int(b.node("QuantizeLinear", {"x", "scale", "zero"}, {"q"}, "quant"), "axis", axis);
  test::attr_int(b.node("DequantizeLinear", {"q", "scale", "zero"}, {"y"}, "dequant"), "axis", axis);
  b.output("q");
  b.output("y");
  return b;
}

std::map<std::string, HostTensor> run(const ModelBuilder& b, const HostTensor& x) {
  Graph g = import_onnx_bytes(b.bytes(), "m.onnx");
  run_graph_passes(g);
  return evaluate(g, {{"x", x}});
}

TEST(QuantizeOps, RoundHalfToEvenAndSaturate) {
  // x / 0.5 = 0.5, 1.5, -2.5, 400, -300: ties go to the even integer, the rest saturate.
  const auto out = run(qdq({5}, test::f32_tensor({}, {0.5}), u8({}, {128})),
                       test::f32_tensor({5}, {0.25, 0.75, -1.25, 200, -150}));
  EXPECT_EQ(out.at("q").to_i64(), (std::vector<int64_t>{128, 130, 126, 255, 0}));
  EXPECT_EQ(out.at("y").to_f64(), (std::vector<double>{0, 1, -1, 63.5, -64}));
}

TEST(QuantizeOps, PerAxisScalesAndZeroPoints) {
  // [1, 2, 2] along axis 1: channel 0 by 1 around 0, channel 1 by 0.25 around -3.
  const auto out = run(qdq({1, 2, 2}, test::f32_tensor({2}, {1, 0.25}), i8({2}, {0, -3})),
                       test::f32_tensor({1, 2, 2}, {1.5, -7, 1, -40}));
  EXPECT_EQ(out.at("q").to_i64(), (std::vector<int64_t>{2, -7, 1, -128}));
  EXPECT_EQ(out.at("y").to_f64(), (std::vector<double>{2, -7, 1, -31.25}));
}

TEST(QuantizeOps, BadScalesAndShapesAreOneErrorNamingTheNode) {
  for (double bad : {0.0, -0.5}) {
    const std::string msg = kiln::test::user_error_of(
        [&] { run(qdq({2}, test::f32_tensor({}, {bad}), u8({}, {0})), test::f32_tensor({2}, {1, 2})); });
    EXPECT_NE(msg.find("'quant' (QuantizeLinear)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("is not positive and finite"), std::string::npos) << msg;
  }
  // Three scales for an axis of two channels.
  std::string msg = kiln::test::user_error_of([&] {
    run(qdq({1, 2}, test::f32_tensor({3}, {1, 1, 1}), u8({3}, {0, 0, 0})),
        test::f32_tensor({1, 2}, {1, 2}));
  });
  EXPECT_NE(msg.find("the scale has 3 values for axis 1 of size 2"), std::string::npos) << msg;
  // A zero point whose shape differs from the scale's.
  msg = kiln::test::user_error_of([&] {
    run(qdq({1, 2}, test::f32_tensor({2}, {1, 1}), u8({}, {0})), test::f32_tensor({1, 2}, {1, 2}));
  });
  EXPECT_NE(msg.find("differs from the scale's"), std::string::npos) << msg;
}

TEST(QuantizeOps, QLinearMatMulRequantizesPerColumn) {
  // a [1, 2] u8 around 1 by 0.5; b [2, 2] i8 around 0 with column scales 1 and 2; y by 0.5.
  ModelBuilder b;
  b.input("a", DataType::u8(), {int64_t{1}, int64_t{2}});
  b.initializer("a_scale", test::f32_tensor({}, {0.5}));
  b.initializer("a_zero", u8({}, {1}));
  b.initializer("b", i8({2, 2}, {1, 2, 3, -4}));
  b.initializer("b_scale", test::f32_tensor({2}, {1, 2}));
  b.initializer("b_zero", i8({2}, {0, 0}));
  b.initializer("y_scale", test::f32_tensor({}, {0.5}));
  b.initializer("y_zero", u8({}, {10}));
  b.node("QLinearMatMul", {"a", "a_scale", "a_zero", "b", "b_scale", "b_zero", "y_scale", "y_zero"},
         {"y"}, "qmm");
  b.output("y");
  Graph g = import_onnx_bytes(b.bytes(), "m.onnx");
  run_graph_passes(g);
  // (a - 1) = [2, 4]; products [2*1 + 4*3, 2*2 + 4*-4] = [14, -12]; scaled by 0.5 * [1, 2] / 0.5
  // = [14, -24], plus 10.
  const auto out = evaluate(g, {{"a", u8({1, 2}, {3, 5})}});
  EXPECT_EQ(out.at("y").to_i64(), (std::vector<int64_t>{24, 0}));
}

}  // namespace
}  // namespace kiln::graph
