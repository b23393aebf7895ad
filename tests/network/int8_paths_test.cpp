// The measured choice between each quantized conv's int8 kernel and its float path
// (network/int8_paths.h). Records that time the first conv's int8 kernel slower than its
// float path and the second's faster make the compile take one path of each, say why, and
// still match the QDQ graph within one quantum; where the records miss a kernel of either
// path the rule decides, and that kernel is listed to be measured.
#include "network/int8_paths.h"

#include <gtest/gtest.h>

#include <fstream>
#include <set>

#include "tests/network/network_check.h"
#include "tests/network/test_models.h"
#include "tests/test_util.h"
#include "tuner/record.h"

namespace kiln::network::test {
namespace {

// A time for every kernel of either path: conv0 (3x3) is slow in int8 and fast in f32, conv1
// (1x1) the other way round; quantize and dequantize are cheap.
std::vector<tuner::TuningRecord> timed(const std::vector<KernelToMeasure>& kernels,
                                       const Target& target, bool with_quantize = true) {
  std::vector<tuner::TuningRecord> records;
  for (const KernelToMeasure& k : kernels) {
    const bool conv = k.workload.op == "conv2d";
    if (!conv && !with_quantize && k.workload.op == "quantize") continue;
    const bool int8 = k.workload.dtype != ir::DataType::f32();
    const bool three = conv && k.workload.param("KH") == 3;
    tuner::TuningRecord r;
    r.target = target;
    r.template_name = k.tpl->name();
    r.workload = k.workload;
    r.config = k.config;
    r.result.costs = {!conv ? 1e-6 : int8 == three ? 1e-3 : 1e-4};
    records.push_back(r);
  }
  return records;
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
      plan_int8_paths(onnx, {}, host, {}, timed(untimed.unmeasured, host, false));
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
  EXPECT_NE(format_report(r).find("int8 paths by the records: 1 quantized convs int8, 1 float"),
            std::string::npos)
      << format_report(r);
}

}  // namespace
}  // namespace kiln::network::test
