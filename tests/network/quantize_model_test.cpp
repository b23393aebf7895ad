// kiln quantize's library (compiler/graph/quantize_model.h) on a small float CNN: the QDQ
// model it writes keeps the float model's answers within the quantization error, compiles
// onto the int8 kernels (two QLinearConv layers), and the compiled model matches the
// reference evaluator run on that QDQ model. --keep-float leaves a layer in float; bad
// requests are one UserError.
#include "compiler/graph/quantize_model.h"

#include <gtest/gtest.h>

#include <cmath>

#include "compiler/base/error.h"
#include "compiler/graph/evaluate.h"
#include "compiler/graph/onnx_import.h"
#include "tests/network/network_check.h"
#include "tests/network/test_models.h"
#include "tests/test_util.h"

namespace kiln::network::test {
namespace {

using graph::DataType;
using graph::HostTensor;
using graph::test::attr_ints;
using graph::test::ModelBuilder;
using graph::test::random_tensor;

// x -> Conv 3x3 -> Relu -> Conv 1x1 -> Relu -> GlobalAveragePool -> Flatten -> Gemm. Four
// input channels: with three the first conv keeps its float path on a CPU without VNNI
// (network/int8_choice.h), and the counts below would depend on the machine.
std::string float_cnn() {
  ModelBuilder b(13);
  b.input("x", DataType::f32(), {int64_t{1}, int64_t{4}, int64_t{12}, int64_t{12}});
  b.initializer("w1", random_tensor({8, 4, 3, 3}, 1, 0.4f));
  b.initializer("b1", random_tensor({8}, 2, 0.1f));
  attr_ints(b.node("Conv", {"x", "w1", "b1"}, {"c1"}, "conv1"), "pads", {1, 1, 1, 1});
  b.node("Relu", {"c1"}, {"r1"});
  b.initializer("w2", random_tensor({8, 8, 1, 1}, 3, 0.5f));
  b.initializer("b2", random_tensor({8}, 4, 0.1f));
  b.node("Conv", {"r1", "w2", "b2"}, {"c2"}, "conv2");
  b.node("Relu", {"c2"}, {"r2"});
  b.node("GlobalAveragePool", {"r2"}, {"p"});
  b.node("Flatten", {"p"}, {"f"});
  b.initializer("w3", random_tensor({8, 5}, 5, 0.5f));
  b.initializer("b3", random_tensor({5}, 6, 0.1f));
  b.node("Gemm", {"f", "w3", "b3"}, {"y"}, "fc");
  b.output("y");
  return b.bytes();
}

std::vector<std::map<std::string, HostTensor>> calibration(int n) {
  std::vector<std::map<std::string, HostTensor>> sets;
  for (int i = 0; i < n; ++i) sets.push_back({{"x", random_tensor({1, 4, 12, 12}, 100 + i, 1.0f)}});
  return sets;
}

int count_nodes(const std::string& bytes, const std::string& op) {
  const graph::Graph g = graph::import_onnx_bytes(bytes, "q.onnx");
  return static_cast<int>(std::count_if(g.nodes.begin(), g.nodes.end(),
                                        [&](const graph::Node& n) { return n.op_type == op; }));
}

TEST(QuantizeModel, WritesAQdqModelThatCompilesOntoInt8Kernels) {
  graph::QuantizeReport r;
  const std::string q = graph::quantize_model(float_cnn(), "cnn.onnx", calibration(4), {}, &r);
  EXPECT_EQ(r.weights, 3);
  EXPECT_EQ(r.activations, 4);  // x, r1, r2 (the Relus' outputs) and f
  EXPECT_GT(count_nodes(q, "QuantizeLinear"), 0);
  ASSERT_EQ(r.outputs.size(), 1u);
  EXPECT_LT(r.outputs[0].relative_rms, 0.05) << "quantization cost too much on y";
  EXPECT_FALSE(r.worst_layers.empty());
  // The compiled QDQ model against the reference evaluator on the same QDQ model: the int8
  // convs are exact where the float reference rounds, so within a little of its output.
  const CompileReport c = expect_host_matches_reference(
      q, {}, {{"x", random_tensor({1, 4, 12, 12}, 9, 1.0f)}}, {}, 0.02);
  EXPECT_EQ(count(layer_ops(c), "QLinearConv"), 2);
}

TEST(QuantizeModel, KeepFloatLeavesALayerInFloat) {
  graph::QuantizeReport r;
  const std::string q =
      graph::quantize_model(float_cnn(), "cnn.onnx", calibration(2), {{"conv2"}}, &r);
  EXPECT_EQ(r.kept_float, std::vector<std::string>{"conv2"});
  EXPECT_EQ(r.weights, 2);
  const CompileReport c = expect_host_matches_reference(
      q, {}, {{"x", random_tensor({1, 4, 12, 12}, 9, 1.0f)}}, {}, 0.02);
  EXPECT_EQ(count(layer_ops(c), "QLinearConv"), 1);
}

// rms(quantized model's y - float model's y) / rms(float y) on one clean input, both by the
// reference evaluator.
double clean_error(const std::string& quantized) {
  const std::map<std::string, HostTensor> x = {{"x", random_tensor({1, 4, 12, 12}, 77, 1.0f)}};
  auto y_of = [&](const std::string& bytes) {
    const graph::Graph g = graph::import_onnx_bytes(bytes, "m.onnx");
    return graph::evaluate(g, x).at("y").to_f64();
  };
  const std::vector<double> q = y_of(quantized), f = y_of(float_cnn());
  double diff2 = 0, ref2 = 0;
  for (size_t i = 0; i < f.size(); ++i) diff2 += (q[i] - f[i]) * (q[i] - f[i]), ref2 += f[i] * f[i];
  return std::sqrt(diff2 / ref2);
}

TEST(QuantizeModel, PercentileAndEntropyRangesIgnoreAnOutlierThatMinMaxFollows) {
  // One calibration value in 2304 is 60x the rest: min-max stretches x's scale to cover it and
  // every ordinary input loses most of its resolution; the 99.9th percentiles leave it out, and
  // so does the least-entropy threshold.
  std::vector<std::map<std::string, HostTensor>> sets = calibration(4);
  HostTensor& x = sets[1].at("x");
  x.data<float>()[100] = 60.0f;
  graph::QuantizeOptions min_max, percentile, entropy;
  percentile.ranges = {graph::RangeMethod::kPercentile, 99.9};
  entropy.ranges.method = graph::RangeMethod::kEntropy;
  const double e_min_max =
      clean_error(graph::quantize_model(float_cnn(), "cnn.onnx", sets, min_max, nullptr));
  const double e_percentile =
      clean_error(graph::quantize_model(float_cnn(), "cnn.onnx", sets, percentile, nullptr));
  EXPECT_LT(e_percentile, 0.05);
  EXPECT_LT(e_percentile * 3, e_min_max)
      << "percentile " << e_percentile << ", min-max " << e_min_max;
  // Without outliers the two agree closely.
  const double clean_pct = clean_error(
      graph::quantize_model(float_cnn(), "cnn.onnx", calibration(4), percentile, nullptr));
  EXPECT_LT(clean_pct, 0.05);
}

TEST(EntropyThreshold, ClipsALongThinTailAndKeepsAFullRange) {
  // A bell of 2048 bins over [0, 1] with its bulk in the first fifth and one far count: the
  // threshold lands near the end of the bulk, far below the maximum.
  std::vector<uint64_t> bell(2048, 0);
  for (size_t i = 0; i < 400; ++i)
    bell[i] = static_cast<uint64_t>(100000 * std::exp(-double(i * i) / 20000));
  bell[2047] = 1;
  const double t = graph::entropy_threshold(bell, 1.0, 255);
  EXPECT_GT(t, 0.08);
  EXPECT_LT(t, 0.35);
  // Values spread evenly over the whole range: nothing is worth clipping.
  const std::vector<uint64_t> flat(2048, 50);
  EXPECT_GT(graph::entropy_threshold(flat, 1.0, 255), 0.95);
}

TEST(QuantizeModel, BadRequestsAreOneUserError) {
  EXPECT_THROW(graph::quantize_model(float_cnn(), "cnn.onnx", {}, {}, nullptr), UserError);
  const std::string msg = kiln::test::user_error_of(
      [&] { graph::quantize_model(float_cnn(), "cnn.onnx", calibration(1), {{"nope"}}, nullptr); });
  EXPECT_NE(msg.find("--keep-float nope"), std::string::npos) << msg;
  graph::QuantizeOptions bad_percentile;
  bad_percentile.ranges = {graph::RangeMethod::kPercentile, 40};
  EXPECT_NE(kiln::test::user_error_of([&] {
              graph::quantize_model(float_cnn(), "cnn.onnx", calibration(1), bad_percentile,
                                    nullptr);
            }).find("percentile must be in (50, 100]"),
            std::string::npos);
  ModelBuilder b(13);
  b.input("x", DataType::f32(), {int64_t{2}, int64_t{3}});
  b.node("Relu", {"x"}, {"y"});
  b.output("y");
  EXPECT_THROW(graph::quantize_model(b.bytes(), "relu.onnx",
                                     {{{"x", random_tensor({2, 3}, 1, 1.0f)}}}, {}, nullptr),
               UserError);
}

}  // namespace
}  // namespace kiln::network::test
