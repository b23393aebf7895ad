// dense.bf16.amx (schedules/dense/amx.h): fallback and random configs against the reference
// on awkward shapes (M, N, K that fill no tile, M = 1, K below one 32-wide step, epilogues,
// f32 output) and on the GEMMs of ResNet-18/50's 1x1 convolutions (M = pixels), run on the
// host where it has AMX and skipped with a message elsewhere. Codegen-only checks hold on
// any host: the kernel's loop is `tdpbf16ps` on tiles, and targets without AMX are refused.
#include "schedules/dense/amx.h"

#include <gtest/gtest.h>

#include "compiler/base/error.h"
#include "schedules/amx_tile.h"
#include "schedules/registry.h"
#include "tests/kernels/amx_cases.h"
#include "tests/kernels/asm_check.h"
#include "tests/kernels/template_harness.h"

namespace kiln::testing {
namespace {

using ir::DataType;
using schedules::Config;
using schedules::OpTemplate;
using schedules::Workload;

Workload dense(int64_t m, int64_t n, int64_t k, std::vector<std::string> epilogue = {},
               bool out_f32 = false) {
  Workload w{"dense", {{"M", m}, {"N", n}, {"K", k}}, DataType::bf16(), std::move(epilogue)};
  if (out_f32) w.params["out_f32"] = 1;
  return w;
}

using Case = AmxCase;

std::vector<Case> cases() {
  std::vector<Case> out;
  for (const Workload& w :
       {dense(37, 53, 30), dense(1, 100, 64), dense(64, 64, 64), dense(13, 17, 7, {"bias", "relu"}),
        dense(19, 40, 33, {}, true), dense(2, 64, 31, {"bias", "residual", "relu6"}),
        dense(3, 5, 1), dense(16, 96, 257, {"bias"}, true), dense(33, 48, 96, {"bias"}),
        // ResNet 1x1 convolutions as GEMMs: 56x56 64->256 (ResNet-50), 28x28 s2 128->256
        // downsample of ResNet-18 (14x14 output), 7x7 512->2048 (ResNet-50).
        dense(3136, 256, 64, {"bias", "relu"}), dense(196, 256, 128, {"bias"}),
        dense(49, 2048, 512, {"bias", "residual", "relu"})})
    for (int c = -1; c < 2; ++c) out.push_back({w, c});
  return out;
}

class AmxDenseTest : public ::testing::TestWithParam<Case> {};

TEST_P(AmxDenseTest, MatchesReference) {
  const Case& c = GetParam();
  const OpTemplate& tpl = schedules::dense_bf16_amx_template();
  Target host = target_from_name("host");
  if (!schedules::has_amx_bf16(host)) GTEST_SKIP() << kNoAmx;
  ASSERT_TRUE(tpl.applies(c.w, host));
  Config cfg = template_config(tpl, c.w, host, c.config);
  DataType out_t = c.w.param_or("out_f32", 0) ? DataType::f32() : DataType::bf16();
  // bf16 output: the dtype's 2e-2; f32 output has no output rounding (as dense_lowp_test).
  double tol = out_t == DataType::f32() ? 1e-2 : 2e-2;
  std::string skip = check_template_inputs(tpl, c.w, "host", cfg, {5, nullptr, out_t, tol});
  if (!skip.empty()) GTEST_SKIP() << skip;
}

INSTANTIATE_TEST_SUITE_P(AmxDense, AmxDenseTest, ::testing::ValuesIn(cases()), amx_case_name);

TEST(AmxDenseSpace, EveryConfigOnAnOddShape) {
  const OpTemplate& tpl = schedules::dense_bf16_amx_template();
  Target host = target_from_name("host");
  if (!schedules::has_amx_bf16(host)) GTEST_SKIP() << kNoAmx;
  Workload w = dense(35, 40, 45, {"bias"});
  schedules::ConfigSpace cs = tpl.space(w, host);
  EXPECT_EQ(cs.size(), 24u);
  for (uint64_t i = 0; i < cs.size(); ++i) {
    std::string skip = check_template_inputs(tpl, w, "host", cs.at(i), {5, nullptr, DataType::bf16(), 2e-2});
    if (!skip.empty()) GTEST_SKIP() << skip;
  }
}

TEST(AmxDenseAsm, InnerLoopIsTdpbf16ps) {
  // Codegen only, for the x86-amx preset: holds on any host.
  std::string s = template_assembly(schedules::dense_bf16_amx_template(), dense(64, 64, 128), "x86-amx");
  // The fallback's 2x2 C tiles: four tdpbf16ps per K step (LLVM may unroll the K loop), each
  // A and B tile loaded once per step and used twice.
  const int dots = count_instructions(s, "tdpbf16ps", "tmm");
  EXPECT_GE(dots, 4) << s;
  EXPECT_EQ(dots % 4, 0) << s;
  // Per block of 2x2 C tiles over K = 128 (4 steps): 16 dots and 16 A/B loads (with 1x1 C
  // tiles it would be 2 loads per dot); C starts as tilezero, never loaded.
  EXPECT_LE(count_instructions(s, "tileloadd", "tmm"), dots) << s;
  EXPECT_GE(count_instructions(s, "tilezero", "tmm"), 4) << s;
  EXPECT_GE(count_instructions(s, "tilestored", "tmm"), 4) << s;
  EXPECT_GE(count_instructions(s, "ldtilecfg", ""), 1) << s;
  EXPECT_EQ(count_instructions(s, "vdpbf16ps", ""), 0) << s;
}

TEST(AmxDenseErrors, TargetsWithoutAmxAreRefused) {
  const OpTemplate& tpl = schedules::dense_bf16_amx_template();
  for (const char* target : {"x86-avx2", "x86-avx512", "arm-bf16"}) {
    SCOPED_TRACE(target);
    Target t = target_from_name(target);
    Workload w = dense(32, 32, 32);
    EXPECT_FALSE(tpl.applies(w, t));
    EXPECT_THROW(tpl.instantiate(w, t, tpl.fallback(w, t)), UserError);
  }
  Target amx = target_from_name("x86-amx");
  EXPECT_FALSE(tpl.applies(Workload{"dense", {{"M", 8}, {"N", 8}, {"K", 8}}, DataType::f32(), {}}, amx));
}

TEST(AmxDenseRegistry, PreferredWhereAmxIs) {
  auto first = [](const char* target) {
    return schedules::templates_for(dense(64, 64, 64), target_from_name(target)).front()->name();
  };
  EXPECT_EQ(first("x86-amx"), "dense.bf16.amx");
  EXPECT_NE(first("x86-avx512"), "dense.bf16.amx");
}

}  // namespace
}  // namespace kiln::testing
