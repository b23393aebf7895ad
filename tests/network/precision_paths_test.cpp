// The measured precision of each layer:
//  - a quantized conv's int8 kernel or its float path (network/int8_paths.h): records that
//    time the first conv's int8 kernel slower than its float path and the second's faster
//    make the compile take one path of each, say why, and still match the QDQ graph within
//    one quantum; where the records miss a kernel of either path the rule decides, and that
//    kernel is listed to be measured;
//  - a conv/dense layer in bf16 or f32 (network/half_paths.h), the same way.
#include <gtest/gtest.h>

#include <fstream>
#include <set>

#include "network/half_paths.h"
#include "network/int8_paths.h"
#include "tests/native_targets.h"
#include "tests/network/network_check.h"
#include "tests/network/test_models.h"
#include "tests/network/timed_records.h"
#include "tests/test_util.h"
#include "tuner/record.h"

namespace kiln::network::test {
namespace {

// A time for every kernel of either form: a 3x3 conv is slow in the low precision (int8 or
// bf16) and fast in f32, a 1x1 conv the other way round; anything else (quantize, dequantize,
// casts) is cheap. `skip`: an op left without a time.
std::vector<tuner::TuningRecord> timed(const std::vector<KernelToMeasure>& kernels,
                                       const Target& target, const std::string& skip = "") {
  return timed_records(kernels, target, [&](const schedules::Workload& w) {
    const bool conv = w.op == "conv2d";
    if (w.op == skip) return 0.0;
    const bool int8 = w.dtype != ir::DataType::f32();
    const bool three = conv && w.param("KH") == 3;
    return !conv ? 1e-6 : int8 == three ? 1e-3 : 1e-4;
  });
}

TEST(Int8Paths, TheRecordsPickEachConvsFasterPath) {
  TempDir dir("kiln-int8-paths");
  const std::string onnx = dir.file("net.onnx");
  std::ofstream(onnx, std::ios::binary) << qdq_chain_model();
  const Target host = target_from_name("host");

  // No records: both convs found, neither timed, and every kernel of both paths listed once.
  const Int8PathPlan untimed = plan_int8_paths(onnx, {}, host, {}, {});
  ASSERT_EQ(untimed.convs.size(), 2u);
  EXPECT_EQ(untimed.convs[0].conv, "conv0");
  EXPECT_EQ(untimed.convs[1].conv, "conv1");
  for (const Int8PathTimes& c : untimed.convs) EXPECT_FALSE(c.measured()) << c.conv;
  EXPECT_TRUE(untimed.paths().measured.empty());
  std::multiset<std::string> kinds;
  for (const KernelToMeasure& k : untimed.unmeasured)
    kinds.insert(k.workload.op + " " + k.workload.dtype.str());
  EXPECT_EQ(kinds.count("conv2d f32"), 2u);
  EXPECT_EQ(kinds.count("conv2d u8"), 2u);
  EXPECT_GE(kinds.count("quantize u8"), 2u);    // each float path's output
  EXPECT_GE(kinds.count("dequantize u8"), 1u);  // and its input
  EXPECT_NE(describe(untimed).find("2 by the rule"), std::string::npos) << describe(untimed);

  // Without the quantize kernels' times, no float path is known: the rule decides both.
  const Int8PathPlan half =
      plan_int8_paths(onnx, {}, host, {}, timed(untimed.unmeasured, host, "quantize"));
  for (const Int8PathTimes& c : half.convs) EXPECT_FALSE(c.measured()) << c.conv;
  for (const KernelToMeasure& k : half.unmeasured) EXPECT_EQ(k.workload.op, "quantize");

  const std::vector<tuner::TuningRecord> records = timed(untimed.unmeasured, host);
  const Int8PathPlan plan = plan_int8_paths(onnx, {}, host, {}, records);
  EXPECT_TRUE(plan.unmeasured.empty());
  ASSERT_EQ(plan.convs.size(), 2u);
  const Int8PathTimes& slow = plan.convs[0];
  ASSERT_TRUE(slow.measured());
  EXPECT_TRUE(slow.keeps_float());
  EXPECT_DOUBLE_EQ(slow.int8_s, 1e-3);
  // The f32 conv, its output's quantize and its input's dequantize.
  EXPECT_GT(slow.float_s, 1e-4 + 1.5e-6);
  EXPECT_LT(slow.float_s, 1e-4 + 4e-6);
  EXPECT_DOUBLE_EQ(slow.float_s - slow.edges_s, 1e-4);
  ASSERT_TRUE(plan.convs[1].measured());
  EXPECT_FALSE(plan.convs[1].keeps_float());
  EXPECT_EQ(plan.paths().measured.at("conv0").rfind(kMeasuredSlower, 0), 0u);
  EXPECT_EQ(plan.paths().measured.at("conv1"), "");

  // Compiled with those records: one conv on each path, within one quantum of the QDQ graph.
  const std::string log = dir.file("paths.jsonl");
  {
    std::ofstream out(log);
    for (const tuner::TuningRecord& r : records) out << tuner::record_to_json(r) << "\n";
  }
  const CompileReport r = expect_host_matches_reference(
      qdq_chain_model(), {}, {{"x", graph::test::random_tensor({1, 8, 10, 10}, 5, 3.0f)}}, {log},
      0.0801);
  const std::vector<std::string> ops = layer_ops(r);
  EXPECT_EQ(count(ops, "QLinearConv"), 1);
  EXPECT_EQ(count(ops, "Conv"), 1);
  ASSERT_EQ(r.int8_kept_float.size(), 1u);
  EXPECT_EQ(r.int8_kept_float[0].node, "conv0");
  EXPECT_EQ(r.int8_kept_float[0].reason.rfind(kMeasuredSlower, 0), 0u)
      << r.int8_kept_float[0].reason;
  EXPECT_NE(format_report(r).find("int8 paths by the records (quantized convs): 1 int8, 1 float"),
            std::string::npos)
      << format_report(r);
}

TEST(HalfPaths, TheRecordsKeepInF32TheLayersTheyTimeFasterThere) {
  TempDir dir("kiln-half-paths");
  const std::string onnx = dir.file("net.onnx");
  std::ofstream(onnx, std::ios::binary) << conv_chain_32();  // 3x3, 1x1, 3x3 (the last: f32)
  const Target target = target_from_name(kiln::test::kX86Bf16);
  const PrecisionOptions bf16{ir::DataType::bf16()};

  const HalfPathPlan untimed = plan_half_paths(onnx, {}, target, bf16, {});
  ASSERT_EQ(untimed.layers.size(), 2u);  // the last layer stays f32 (keep_last_f32)
  for (const HalfPathTimes& l : untimed.layers) EXPECT_FALSE(l.measured()) << l.node;
  std::multiset<std::string> kinds;
  for (const KernelToMeasure& k : untimed.unmeasured)
    kinds.insert(k.workload.op + " " + k.workload.dtype.str());
  EXPECT_EQ(kinds.count("conv2d bf16"), 2u);
  EXPECT_GE(kinds.count("conv2d f32"), 2u);
  EXPECT_EQ(kinds.count("cast bf16"), 1u);  // the region's one cast, f32 to bf16
  EXPECT_NE(describe(untimed).find("2 by the rule"), std::string::npos) << describe(untimed);
  // No time for the cast: the first layer's bf16 form is not known.
  const HalfPathPlan half =
      plan_half_paths(onnx, {}, target, bf16, timed(untimed.unmeasured, target, "cast"));
  EXPECT_FALSE(half.layers[0].measured());
  EXPECT_TRUE(half.layers[1].measured());

  const std::vector<tuner::TuningRecord> records = timed(untimed.unmeasured, target);
  const HalfPathPlan plan = plan_half_paths(onnx, {}, target, bf16, records);
  EXPECT_TRUE(plan.unmeasured.empty());
  ASSERT_TRUE(plan.layers[0].measured() && plan.layers[1].measured());
  EXPECT_TRUE(plan.layers[0].keeps_f32());
  EXPECT_DOUBLE_EQ(plan.layers[0].f32_s, 1e-4);
  EXPECT_DOUBLE_EQ(plan.layers[0].half_s, 1e-3 + 1e-6);  // the kernel and the cast it reads
  EXPECT_FALSE(plan.layers[1].keeps_f32());
  ASSERT_EQ(plan.measured_f32().size(), 1u);
  EXPECT_EQ(plan.measured_f32().begin()->second.rfind(kHalfMeasuredSlower, 0), 0u);

  // Compiled with those records: the 3x3 layer f32, the 1x1 one bf16.
  const std::string log = dir.file("half.jsonl");
  {
    std::ofstream out(log);
    for (const tuner::TuningRecord& r : records) out << tuner::record_to_json(r) << "\n";
  }
  CompileOptions o{onnx, target, {log}, {}, dir.file("out")};
  o.precision = bf16;
  const CompileReport r = compile_network(o);
  EXPECT_EQ(r.precision.half_nodes, 1);
  EXPECT_EQ(r.precision.measured_f32, 1);
  std::vector<std::string> conv_dtypes;
  for (const LayerRow& l : r.layers)
    if (l.op_type == "Conv") conv_dtypes.push_back(l.dtype);
  EXPECT_EQ(conv_dtypes, (std::vector<std::string>{"f32", "bf16", "f32"}));
  EXPECT_NE(format_report(r).find("bf16 layers by the records: 1 bf16, 1 f32"), std::string::npos)
      << format_report(r);
}

// A depthwise conv writes only its input's type: it runs bf16 only when the layer reading it
// does, so the two choose together, by the sum of their times.
TEST(HalfPaths, ADepthwiseConvAndTheLayerReadingItChooseTogether) {
  TempDir dir("kiln-half-tied");
  const std::string onnx = dir.file("net.onnx");
  // pointwise expand, depthwise 3x3, pointwise project (kept bf16: no last-layer rule here)
  std::ofstream(onnx, std::ios::binary) << depthwise_pointwise_block();
  const Target target = target_from_name(kiln::test::kX86Bf16);
  const PrecisionOptions bf16{ir::DataType::bf16(), false};
  const HalfPathPlan untimed = plan_half_paths(onnx, {}, target, bf16, {});
  ASSERT_EQ(untimed.layers.size(), 3u);
  // Times where the project layer alone is slower in bf16 (by 3e-4 s) and the depthwise conv
  // faster by `dw_saves`; the expand layer faster in bf16, on its own.
  auto plan_with = [&](double dw_saves) {
    const auto records =
        timed_records(untimed.unmeasured, target, [&](const schedules::Workload& w) {
          const bool half = w.dtype != ir::DataType::f32();
          const bool conv = w.op == "conv2d";
          const bool dw = conv && w.param("groups") > 1;
          const bool project = conv && !dw && w.param("O") < w.param("C");
          if (!conv) return 1e-7;
          if (dw && half) return 1e-3 - dw_saves;
          if (project && half) return 1e-3 + 3e-4;
          return half ? 1e-3 - 5e-4 : 1e-3;
        });
    return plan_half_paths(onnx, {}, target, bf16, records);
  };
  for (const double dw_saves : {5e-4, 2e-5}) {
    const HalfPathPlan plan = plan_with(dw_saves);
    ASSERT_TRUE(plan.unmeasured.empty());
    const HalfPathTimes &expand = plan.layers[0], &dw = plan.layers[1], &project = plan.layers[2];
    EXPECT_EQ(expand.group_size, 1);
    EXPECT_FALSE(expand.keeps_f32());
    EXPECT_EQ(dw.group_size, 2);
    EXPECT_EQ(project.group_size, 2);
    EXPECT_NEAR(dw.group_f32_s, dw.f32_s + project.f32_s, 1e-12);
    // Saving 5e-4 in the depthwise conv pays for the project layer's 3e-4: both bf16. Saving
    // 2e-5 does not: both f32, the depthwise conv although it alone is faster in bf16.
    const bool together_f32 = dw_saves < 1e-4;
    EXPECT_EQ(dw.keeps_f32(), together_f32) << dw_saves;
    EXPECT_EQ(project.keeps_f32(), together_f32) << dw_saves;
    EXPECT_LT(dw.half_s, dw.f32_s);
    EXPECT_GT(project.half_s, project.f32_s * (1 + kF32Margin));
    if (together_f32)
      EXPECT_NE(plan.measured_f32().at(dw.node).find("with the depthwise conv it is tied to, 2 "
                                                     "layers"),
                std::string::npos)
          << plan.measured_f32().at(dw.node);
  }
}

}  // namespace
}  // namespace kiln::network::test
