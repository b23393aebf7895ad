// Kernels that take a size at run time (Workload::run_time): one kernel, lowered once for the
// size its config is chosen at, run at the ends and the middle of a range, at primes and at
// sizes that leave every kind of tail, each against the reference at that size; x86
// natively, ARM under qemu.
#include <gtest/gtest.h>

#include "compiler/base/error.h"
#include "compiler/ir/printer.h"
#include "cost_model/ir_features.h"
#include "schedules/dense/batch_matmul.h"
#include "schedules/dense/dense.h"
#include "schedules/elementwise/elementwise.h"
#include "schedules/reduce/softmax.h"
#include "tests/kernels/kernel_harness.h"
#include "tests/kernels/template_harness.h"
#include "tests/test_util.h"
#include "tuner/builder.h"

namespace kiln::testing {
namespace {

using schedules::Config;
using schedules::OpTemplate;
using schedules::Workload;

Workload dense(int64_t m, int64_t n, int64_t k, std::vector<std::string> epilogue = {}) {
  Workload w{"dense", {{"M", m}, {"N", n}, {"K", k}}, ir::DataType::f32(), std::move(epilogue)};
  w.run_time = {"M"};
  return w;
}

// An elementwise workload from per-operand shapes, taking the `run_time` sizes at run time.
Workload ew(const std::string& op, const std::vector<std::vector<int64_t>>& shapes,
            std::vector<std::string> run_time, std::vector<std::string> steps = {}) {
  Workload w{op, {}, ir::DataType::f32(), std::move(steps)};
  w.params["rank"] = static_cast<int64_t>(shapes[0].size());
  for (size_t o = 0; o < shapes.size(); ++o)
    for (size_t d = 0; d < shapes[o].size(); ++d)
      w.params[std::string(1, char('a' + o)) + std::to_string(d)] = shapes[o][d];
  w.run_time = std::move(run_time);
  return w;
}

// Lowers `tpl` once for `rep` and checks that kernel with every run-time size set to each
// of `sizes` in turn.
void expect_close_at_sizes(const OpTemplate& tpl, const Workload& rep,
                           const std::string& target_name, const Config& cfg,
                           const std::vector<int64_t>& sizes) {
  const Target target = target_from_name(target_name);
  SCOPED_TRACE(tpl.name() + " " + rep.str() + " on " + target_name + " config " + cfg.to_json());
  tuner::BuiltKernel k = tuner::lower_template(tpl, rep, target, cfg, "kernel");
  std::vector<Workload> at;
  for (int64_t v : sizes) {
    at.push_back(rep);
    for (const std::string& d : rep.run_time) at.back().params[d] = v;
  }
  std::vector<tuner::CheckResult> results =
      tuner::check_at_sizes(tpl, k, target, at, test_run_options());
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (!results[i].skip_reason.empty()) GTEST_SKIP() << results[i].skip_reason;
    EXPECT_TRUE(results[i].comparison.close)
        << "at size " << sizes[i] << ": " << results[i].comparison.message();
  }
}

void expect_fallback_close_at_sizes(const OpTemplate& tpl, const Workload& rep,
                                    const std::string& target_name,
                                    const std::vector<int64_t>& sizes) {
  expect_close_at_sizes(tpl, rep, target_name, tpl.fallback(rep, target_from_name(target_name)),
                        sizes);
}

const std::vector<int64_t> kRows = {1, 2, 5, 6, 7, 13, 31, 63, 64, 97, 128};

class RunTimeDense : public ::testing::TestWithParam<std::string> {};

TEST_P(RunTimeDense, OneKernelMatchesTheReferenceAtEveryRowCount) {
  const OpTemplate& tpl = schedules::dense_packed_template();
  expect_fallback_close_at_sizes(tpl, dense(64, 96, 40, {"bias", "residual", "relu"}), GetParam(),
                                 kRows);
}

TEST_P(RunTimeDense, BlockedTilesSplitKAndParallelRows) {
  const OpTemplate& tpl = schedules::dense_packed_template();
  Workload rep = dense(64, 96, 70, {"bias"});
  Config cfg({{"mr", 4},
              {"nr_vecs", 2},
              {"k_unroll", 2},
              {"panels_outer", 0},
              {"parallel", 1},
              {"kc", 32},
              {"mc_tiles", 4}});
  expect_close_at_sizes(tpl, rep, GetParam(), cfg, kRows);
}

TEST_P(RunTimeDense, AGemvConfigRunsMoreRows) {
  const OpTemplate& tpl = schedules::dense_packed_template();
  expect_fallback_close_at_sizes(tpl, dense(1, 80, 33), GetParam(), {1, 3, 17});
}

TEST_P(RunTimeDense, AttentionScoresAndWeightedValues) {
  const OpTemplate& tpl = schedules::batch_matmul_template();
  // Q K^T over 3 heads: tokens by tokens; then the weights times V: the tokens are K.
  Workload scores{"batch_matmul",
                  {{"B", 3}, {"M", 64}, {"N", 64}, {"K", 24}, {"transpose_b", 1}},
                  ir::DataType::f32(),
                  {}};
  scores.run_time = {"M", "N"};
  Workload values{
      "batch_matmul", {{"B", 3}, {"M", 64}, {"N", 24}, {"K", 64}}, ir::DataType::f32(), {}};
  values.run_time = {"M", "K"};
  const std::vector<int64_t> tokens = {1, 2, 5, 7, 16, 31, 64, 97};
  for (const Workload& w : {scores, values}) {
    expect_fallback_close_at_sizes(tpl, w, GetParam(), tokens);
    Config other = tpl.fallback(w, target_from_name(GetParam()));
    other.set("k_unroll", 4);
    other.set("parallel", 1);
    other.set("pack_b", w.at_run_time("K") ? 0 : 1 - other["pack_b"]);
    expect_close_at_sizes(tpl, w, GetParam(), other, tokens);
  }
}

std::string target_test_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string s = info.param;
  for (char& c : s)
    if (c == '-') c = '_';
  return s;
}

INSTANTIATE_TEST_SUITE_P(Targets, RunTimeDense,
                         ::testing::Values("x86-avx2", "x86-avx512", "arm-neon"), target_test_name);

class RunTimeElementwise : public ::testing::TestWithParam<std::string> {};

TEST_P(RunTimeElementwise, ATrailingBroadcastOverRunTimeRows) {
  // [1, S, 40] + [40]: the bias add of a sequence of tokens.
  Workload rep = ew("add", {{1, 64, 40}, {1, 1, 40}}, {"a1"}, {"gelu"});
  expect_fallback_close_at_sizes(schedules::elementwise_flat_template("add"), rep, GetParam(),
                                 kRows);
}

TEST_P(RunTimeElementwise, ARunTimeSizeMergedIntoOneFlatLoop) {
  // [S, 7]: one flat loop of 7*S elements, split into vectors with a tail.
  Workload rep = ew("sigmoid", {{64, 7}}, {"a0"});
  expect_fallback_close_at_sizes(schedules::elementwise_flat_template("sigmoid"), rep, GetParam(),
                                 kRows);
}

TEST_P(RunTimeElementwise, OperandsThatShareTheRunTimeSize) {
  // [S, 1] * [S, 10] + [S, 10]: a per-row scale, both sides named.
  Workload rep = ew("mul", {{32, 1}, {32, 10}, {32, 10}}, {"a0", "b0", "c0"}, {"add"});
  expect_fallback_close_at_sizes(schedules::elementwise_flat_template("mul"), rep, GetParam(),
                                 {1, 2, 3, 32, 33, 100});
}

TEST_P(RunTimeElementwise, SoftmaxOverRunTimeRows) {
  Workload rep{"softmax", {{"M", 64}, {"N", 77}}, ir::DataType::f32(), {}};
  rep.run_time = {"M"};
  expect_fallback_close_at_sizes(schedules::softmax_template(), rep, GetParam(), kRows);
}

TEST_P(RunTimeElementwise, SoftmaxOverRunTimeRowsAndRowLength) {
  // Attention's scores: as many rows and keys as the sequence has tokens.
  const OpTemplate& tpl = schedules::softmax_template();
  Workload rep{"softmax", {{"M", 64}, {"N", 64}}, ir::DataType::f32(), {}};
  rep.run_time = {"M", "N"};
  const std::vector<int64_t> sizes = {1, 2, 5, 16, 17, 31, 64, 97};
  expect_fallback_close_at_sizes(tpl, rep, GetParam(), sizes);
  Config row_fused = tpl.fallback(rep, target_from_name(GetParam()));
  row_fused.set("row_fused", 0);
  expect_close_at_sizes(tpl, rep, GetParam(), row_fused, sizes);
  // With the row length's maximum declared, each row's exponentials go to a buffer of that
  // maximum, looped over at the run-time length.
  rep.run_time_max = {{"N", 100}};
  Config buffered = tpl.fallback(rep, target_from_name(GetParam()));
  EXPECT_EQ(buffered["row_fused"], 2);
  expect_close_at_sizes(tpl, rep, GetParam(), buffered, sizes);
}

TEST(RunTimeSizes, ADeclaredMaximumBoundsTheSizesAKernelRunsAt) {
  const OpTemplate& tpl = schedules::softmax_template();
  const Target t = target_from_name("x86-avx512");
  Workload w{"softmax", {{"M", 64}, {"N", 64}}, ir::DataType::f32(), {}};
  w.run_time = {"N"};
  w.run_time_max = {{"N", 100}};
  EXPECT_EQ(w.str(), "softmax M=64 N=64 f32 run-time N<=100");
  tuner::BuiltKernel k = tuner::lower_template(tpl, w, t, tpl.fallback(w, t), "kernel");
  // The row buffer holds the maximum, in whole vectors of 16 lanes.
  EXPECT_NE(ir::to_string(k.func.body).find("allocate E[f32 * 112]"), std::string::npos)
      << ir::to_string(k.func.body);
  Workload above = w;
  above.params["N"] = 101;
  EXPECT_NE(test::user_error_of([&] { tuner::at_sizes(k, tpl, above); }).find("up to 100, not 101"),
            std::string::npos);
  EXPECT_NE(test::user_error_of([&] { tpl.validate(above, t); }).find("above its declared maximum"),
            std::string::npos);
  w.run_time_max = {{"M", 10}};
  EXPECT_NE(test::user_error_of([&] { tpl.validate(w, t); }).find("not a run-time size"),
            std::string::npos);
}

TEST_P(RunTimeElementwise, LayerNormOverRunTimeRows) {
  const OpTemplate& tpl = schedules::layer_norm_template();
  Workload rep{"layer_norm", {{"M", 64}, {"N", 40}}, ir::DataType::f32(), {}};
  rep.run_time = {"M"};
  expect_fallback_close_at_sizes(tpl, rep, GetParam(), kRows);
  rep.run_time = {"M", "N"};
  expect_fallback_close_at_sizes(tpl, rep, GetParam(), {1, 3, 16, 40, 67});
}

INSTANTIATE_TEST_SUITE_P(Targets, RunTimeElementwise,
                         ::testing::Values("x86-avx2", "x86-avx512", "arm-neon"), target_test_name);

TEST(RunTimeSizes, TheMainRowLoopOfADenseKernelHasNoGuard) {
  const OpTemplate& tpl = schedules::dense_packed_template();
  const Target t = target_from_name("x86-avx512");
  Workload rep = dense(64, 96, 40);
  tuner::BuiltKernel k = tuner::lower_template(tpl, rep, t, tpl.fallback(rep, t), "kernel");
  // The sizes argument comes first and M is read from it once, at the start.
  ASSERT_EQ(k.func.args.front()->name, "sizes");
  const std::string text = ir::to_string(k.func.body);
  EXPECT_EQ(text.rfind("let M = sizes[0]", 0), 0u) << text;
  // Guard-free rows first: the first `if` comes after the first full tile's stores.
  const size_t first_store = text.find("C[");
  const size_t first_if = text.find("if (");
  ASSERT_NE(first_store, std::string::npos);
  EXPECT_TRUE(first_if == std::string::npos || first_store < first_if) << text;
}

TEST(RunTimeSizes, TheCostModelSeesTheSizeAKernelIsMeasuredAt) {
  const OpTemplate& tpl = schedules::dense_packed_template();
  const Target t = target_from_name("x86-avx512");
  Workload rep = dense(64, 96, 40);
  tuner::BuiltKernel k = tuner::lower_template(tpl, rep, t, tpl.fallback(rep, t), "kernel");
  const std::string bound = ir::to_string(tuner::with_sizes_of(k, rep).body);
  EXPECT_EQ(bound.find("sizes["), std::string::npos) << bound;
  EXPECT_EQ(bound.find("M"), std::string::npos) << bound;
  Workload larger = rep;
  larger.params["M"] = 512;
  EXPECT_NE(cost_model::ir_features(tuner::with_sizes_of(k, rep)),
            cost_model::ir_features(tuner::with_sizes_of(k, larger)));
}

TEST(RunTimeSizes, ATemplateRefusesASizeItCannotTakeAtRunTime) {
  const OpTemplate& tpl = schedules::dense_packed_template();
  const Target t = target_from_name("x86-avx512");
  Workload w = dense(8, 16, 4);
  w.run_time = {"K"};
  EXPECT_EQ(test::user_error_of([&] { tpl.instantiate(w, t, tpl.fallback(w, t)); }),
            "dense K=4 M=8 N=16 f32 run-time K: dense.packed cannot take K at run time (it can "
            "take M)");
  w.run_time = {"M", "M"};
  EXPECT_NE(test::user_error_of([&] { tpl.validate(w, t); }).find("M is named twice"),
            std::string::npos);
}

TEST(RunTimeSizes, AnElementwiseOperandThatSpansARunTimeSizeMustBeNamed) {
  const OpTemplate& tpl = schedules::elementwise_flat_template("add");
  const Target t = target_from_name("x86-avx512");
  Workload w = ew("add", {{8, 4}, {8, 4}}, {"a0"});
  EXPECT_NE(test::user_error_of([&] {
              tpl.instantiate(w, t, tpl.fallback(w, t));
            }).find("operand b spans dimension 0, which a0 takes at run time; name b0 too"),
            std::string::npos);
  w = ew("add", {{8, 4}, {1, 4}}, {"a0", "b0"});
  EXPECT_NE(test::user_error_of([&] {
              tpl.instantiate(w, t, tpl.fallback(w, t));
            }).find("b0 is taken at run time, but operand b broadcasts along dimension 0"),
            std::string::npos);
}

TEST(RunTimeSizes, AKernelDescribedAtOtherSizesKeepsItsPackedWeights) {
  const OpTemplate& tpl = schedules::dense_packed_template();
  const Target t = target_from_name("x86-avx512");
  Workload rep = dense(64, 96, 40);
  tuner::BuiltKernel k = tuner::lower_template(tpl, rep, t, tpl.fallback(rep, t), "kernel");
  Workload w = rep;
  w.params["M"] = 5;
  tuner::BuiltKernel at = tuner::at_sizes(k, tpl, w);
  EXPECT_EQ(at.args[1].logical.shape, (std::vector<int64_t>{5, 40}));      // A
  EXPECT_EQ(at.args[2].kernel_elements, k.args[2].kernel_elements);        // B, packed
  EXPECT_EQ(at.args.back().logical.shape, (std::vector<int64_t>{5, 96}));  // C
  EXPECT_DOUBLE_EQ(at.flops, k.flops * 5 / 64);
  w.params["N"] = 48;  // not a run-time size: the packed weights differ
  EXPECT_NE(test::user_error_of([&] { tuner::at_sizes(k, tpl, w); }).find("is packed"),
            std::string::npos);
}

}  // namespace
}  // namespace kiln::testing
