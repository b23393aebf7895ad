// `kiln compile --records --max-error E` (network/error_budget.h): of the layers the records
// time faster in a fast form (a quantized conv's int8 kernel, a layer in bf16), the compile
// keeps as many as hold the outputs within E of the precise model's, the biggest savings
// first, and what it writes is within E when run again here.
#include "network/error_budget.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <limits>

#include "compiler/graph/tensor.h"
#include "kiln/model.h"
#include "network/compile_network.h"
#include "network/half_paths.h"
#include "network/int8_paths.h"
#include "tests/native_targets.h"
#include "tests/network/test_models.h"
#include "tests/network/timed_records.h"
#include "tuner/record.h"

namespace kiln::network::test {
namespace {

using Outputs = std::vector<std::vector<double>>;

TEST(ErrorBudget, TheErrorIsTheWorstOutputsRelativeRms) {
  EXPECT_EQ(relative_rms_error({{1, 2}, {3}}, {{1, 2}, {3}}), 0);
  // Output 0: |(0, 1)| / |(3, 4)| = 0.2; output 1: 0.5.
  EXPECT_DOUBLE_EQ(relative_rms_error({{3, 5}, {3}}, {{3, 4}, {2}}), 0.5);
  EXPECT_DOUBLE_EQ(relative_rms_error({{3, 5}}, {{3, 4}}), 0.2);
  EXPECT_EQ(relative_rms_error({{0, 0}}, {{0, 0}}), 0);
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(relative_rms_error({{1e-9}}, {{0}}), inf);
  EXPECT_EQ(relative_rms_error({{std::nan("")}}, {{1}}), inf);
  EXPECT_EQ(relative_rms_error({{1}}, {{std::nan("")}}), inf);
}

// Records of every kernel of both forms: each low-precision conv faster than its precise form,
// a 1x1 one by ten times more than a 3x3 one; anything else cheap.
std::string write_records(const std::vector<KernelToMeasure>& kernels, const Target& target,
                          const std::string& path) {
  std::ofstream out(path);
  for (const tuner::TuningRecord& r :
       timed_records(kernels, target, [](const schedules::Workload& w) {
         const bool conv = w.op == "conv2d";
         const bool low = w.dtype != ir::DataType::f32();
         const bool big = conv && w.param("KH") == 1;  // saves 9e-3 rather than 9e-4
         return !conv ? 1e-7 : low ? 1e-3 : big ? 1e-2 : 1.9e-3;
       }))
    out << tuner::record_to_json(r) << "\n";
  return path;
}

std::vector<std::map<std::string, graph::HostTensor>> samples(const std::vector<int64_t>& shape,
                                                              float scale) {
  std::vector<std::map<std::string, graph::HostTensor>> s;
  for (uint32_t seed = 1; seed <= 3; ++seed)
    s.push_back({{"x", graph::test::random_tensor(shape, seed, scale)}});
  return s;
}

// The error of the model in `dir` against `reference` on `inputs`, run here as a user would.
double error_of_artifact(const std::string& dir,
                         const std::vector<std::map<std::string, graph::HostTensor>>& inputs,
                         const Outputs& reference) {
  Model m = Model::load(dir + "/model.so", dir + "/model.params");
  Outputs got(m.outputs().size());
  for (const auto& in : inputs) {
    std::vector<float> y(m.outputs()[0].bytes / sizeof(float));
    m.run({in.at("x").raw()}, {y.data()});
    got[0].insert(got[0].end(), y.begin(), y.end());
  }
  return relative_rms_error(got, reference);
}

// Compiles `onnx` with the records at `budget`, checks what the fit says against what the
// artifact does, and returns the fit.
ErrorBudgetFit compile_within(const std::string& onnx, const Target& target,
                              const PrecisionOptions& precision, const std::string& log,
                              double budget, const std::vector<int64_t>& shape, float scale,
                              const std::string& out) {
  CompileOptions o{onnx, target, {log}, {}, out};
  o.precision = precision;
  o.error_budget = ErrorBudget{budget, samples(shape, scale)};
  const CompileReport r = compile_network(o);
  EXPECT_TRUE(r.error_fit.has_value());
  if (!r.error_fit) return {};
  const ErrorBudgetFit& fit = *r.error_fit;
  EXPECT_LE(fit.error, budget);
  EXPECT_EQ(fit.moved.empty(), fit.error_all_fast <= budget);
  EXPECT_NE(format_report(r).find("--max-error"), std::string::npos) << format_report(r);

  // The precise model, compiled on its own, is the reference the artifact is held to.
  CompileOptions precise{onnx, target, {log}, {}, out + ".precise"};
  precise.precision.int8 = {Int8Paths::Force::Float, {}};
  compile_network(precise);
  Model m = Model::load(out + ".precise/model.so", out + ".precise/model.params");
  Outputs reference(1);
  for (const auto& in : o.error_budget->inputs) {
    std::vector<float> y(m.outputs()[0].bytes / sizeof(float));
    m.run({in.at("x").raw()}, {y.data()});
    reference[0].insert(reference[0].end(), y.begin(), y.end());
  }
  EXPECT_NEAR(error_of_artifact(out, o.error_budget->inputs, reference), fit.error, 1e-12);
  return fit;
}

TEST(ErrorBudget, AQuantizedModelKeepsOnItsInt8KernelsWhatTheBudgetAllows) {
  TempDir dir("kiln-error-int8");
  const std::string onnx = dir.file("net.onnx");
  std::ofstream(onnx, std::ios::binary) << qdq_chain_model();
  const Target host = target_from_name("host");
  const std::string log =
      write_records(plan_int8_paths(onnx, {}, host, {}, {}).unmeasured, host, dir.file("r.jsonl"));
  const std::vector<int64_t> shape = {1, 8, 10, 10};

  // A budget nothing exceeds: both convs on their int8 kernels, conv1 (the 1x1) ranked first.
  const ErrorBudgetFit all = compile_within(onnx, host, {}, log, 1e9, shape, 3, dir.file("a"));
  EXPECT_EQ(all.kept_fast, (std::vector<std::string>{"conv1", "conv0"}));
  EXPECT_TRUE(all.moved.empty());
  EXPECT_EQ(all.runs, 2);  // the precise program and the records' choice
  EXPECT_EQ(all.inputs, 3u);

  // No error allowed: every conv whose int8 kernel changes an output goes back to its float
  // path, the smaller saving first.
  const ErrorBudgetFit none = compile_within(onnx, host, {}, log, 0, shape, 3, dir.file("n"));
  EXPECT_EQ(none.error, 0);
  // The integer kernels round a few outputs one quantum away from the float path's.
  ASSERT_GT(all.error_all_fast, 0);
  ASSERT_FALSE(none.moved.empty());
  EXPECT_EQ(none.moved.back(), "conv0");
}

TEST(ErrorBudget, HalfLayersThatCostTooMuchAccuracyRunInF32) {
  const Target target = target_from_name(kiln::test::kX86Bf16);
  if (!host_can_run(target)) GTEST_SKIP() << "this CPU has no AVX512-BF16 to run bf16 kernels";
  TempDir dir("kiln-error-bf16");
  const std::string onnx = dir.file("net.onnx");
  std::ofstream(onnx, std::ios::binary) << conv_chain_32();  // 3x3, 1x1, 3x3 (the last: f32)
  const PrecisionOptions bf16{ir::DataType::bf16()};
  const HalfPathPlan untimed = plan_half_paths(onnx, {}, target, bf16, {});
  ASSERT_EQ(untimed.layers.size(), 2u);
  const std::string log = write_records(untimed.unmeasured, target, dir.file("r.jsonl"));
  const std::vector<int64_t> shape = {1, 32, 8, 8};

  const ErrorBudgetFit all = compile_within(onnx, target, bf16, log, 1, shape, 1, dir.file("a"));
  ASSERT_EQ(all.kept_fast.size(), 2u);
  EXPECT_EQ(all.kept_fast[0], untimed.layers[1].node);  // the 1x1 saves most
  ASSERT_GT(all.error_all_fast, 0);  // bf16 keeps 8 bits of mantissa: never exact here

  // Half that error: the 3x3 layer, which saves least, is the first to go back to f32.
  const ErrorBudgetFit half =
      compile_within(onnx, target, bf16, log, all.error_all_fast / 2, shape, 1, dir.file("h"));
  ASSERT_FALSE(half.moved.empty());
  EXPECT_EQ(half.moved.back(), untimed.layers[0].node);
  EXPECT_EQ(half.runs, 3);  // precise, both fast, the 1x1 alone fast
  // Exactly the error of the 1x1 alone in bf16: it stays bf16, the 3x3 goes f32.
  ASSERT_EQ(half.errors.count(1), 1u);
  const ErrorBudgetFit one =
      compile_within(onnx, target, bf16, log, half.errors.at(1), shape, 1, dir.file("o"));
  EXPECT_EQ(one.kept_fast, std::vector<std::string>{untimed.layers[1].node});
  EXPECT_EQ(one.moved, std::vector<std::string>{untimed.layers[0].node});
  EXPECT_EQ(one.error, half.errors.at(1));

  const ErrorBudgetFit none = compile_within(onnx, target, bf16, log, 0, shape, 1, dir.file("n"));
  EXPECT_EQ(none.moved.size(), 2u);
  EXPECT_EQ(none.error, 0);
}

}  // namespace
}  // namespace kiln::network::test
