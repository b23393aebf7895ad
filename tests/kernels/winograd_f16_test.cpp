// conv2d.winograd in f16 on arm-fp16 (under qemu): the error of each output tile size
// against the double reference on ResNet-18's 3x3 stride-1 channel counts (a small image:
// the error depends on the channels, not the image size), which sets the table behind
// winograd_expected_error_f16; fallback and random configs on awkward shapes within f16's
// tolerance; `fmla .8h` in its GEMM; the targets it refuses.
#include <gtest/gtest.h>

#include <cstdio>

#include "compiler/base/error.h"
#include "kiln/compare.h"
#include "tests/kernels/asm_check.h"
#include "schedules/conv2d/common.h"
#include "schedules/conv2d/winograd.h"
#include "tests/kernels/kernel_harness.h"
#include "tests/kernels/template_harness.h"

namespace kiln::testing {
namespace {

using ir::DataType;
using schedules::Workload;

Workload conv3x3(int64_t n, int64_t c, int64_t h, int64_t w, int64_t o, int64_t pad,
                 std::vector<std::string> epi = {}, bool out_f32 = false) {
  Workload wl{"conv2d",
              {{"N", n}, {"C", c}, {"H", h}, {"W", w}, {"O", o}, {"KH", 3}, {"KW", 3},
               {"stride", 1}, {"pad", pad}},
              DataType::f16(),
              std::move(epi)};
  if (out_f32) wl.params["out_f32"] = 1;
  return wl;
}

// Max error (kiln's rule) of F(m) with f16_acc `acc` against the double reference.
double winograd_error(const Workload& w, int64_t m, int64_t acc, bool* ran) {
  const auto& wg = schedules::conv2d_winograd_template();
  const Target t = target_from_name("arm-fp16");
  schedules::Config cfg = schedules::winograd_fallback(w, t, m);
  cfg.set("f16_acc", acc);
  std::vector<schedules::Values> in;
  uint32_t seed = 3;
  for (const schedules::TensorSpec& s : wg.inputs(w))
    in.push_back(random_values(s.elements(), seed++, DataType::f16()));
  std::string skip;
  schedules::Values got = run_template(wg, w, "arm-fp16", cfg, in, DataType::f32(), &skip);
  *ran = skip.empty();
  if (!*ran) return 0;
  schedules::Values want = wg.reference(w, in);
  return judge_closeness(
             got.size(), [&](size_t i) { return double(got[i]); },
             [&](size_t i) { return double(want[i]); }, INFINITY)
      .max_error;
}

TEST(WinogradF16, ErrorPerTileSize) {
  std::printf("%-28s %4s %12s %12s\n", "layer (8x8 image)", "m", "f16 blocks", "f32 acc");
  for (int64_t c : {64, 256}) {
    Workload w = conv3x3(1, c, 12, 12, 64, 1, {}, true);
    for (int64_t m : schedules::winograd_tile_choices(w)) {
      bool ran = false;
      double blocks = winograd_error(w, m, 2, &ran);
      if (!ran) GTEST_SKIP() << "arm-fp16 cannot run here";
      double f32 = winograd_error(w, m, 0, &ran);
      std::printf("%-28s %4lld %12.2e %12.2e\n", w.str().c_str(), static_cast<long long>(m), blocks,
                  f32);
      EXPECT_LE(2 * blocks, 1e-2) << "F(" << m << ") is offered but does not fit f16";
    }
    EXPECT_EQ(schedules::winograd_tile_choices(w), std::vector<int64_t>{2});
  }
}

std::vector<TemplateCase> cases() {
  const auto* wg = &schedules::conv2d_winograd_template();
  std::vector<TemplateCase> out;
  for (const Workload& w : {conv3x3(1, 5, 9, 9, 13, 1, {"bias", "relu"}),   // primes
                            conv3x3(2, 8, 7, 11, 16, 0, {"residual"}),      // batch 2, pad 0
                            conv3x3(1, 12, 6, 5, 20, 2, {"bias", "relu6"}), // pad 2
                            conv3x3(1, 16, 3, 3, 8, 1),                     // one tile
                            conv3x3(1, 40, 10, 10, 24, 1, {}, true)})       // f32 output
    for (int c = -1; c < 2; ++c) out.push_back({w, "arm-fp16", c, wg});
  // ResNet-18's channel counts on a small image.
  for (const Workload& w : {conv3x3(1, 64, 8, 8, 64, 1, {"bias", "relu"}),
                            conv3x3(1, 256, 4, 4, 256, 1, {"bias", "residual"}),
                            conv3x3(1, 512, 3, 3, 512, 1)})
    out.push_back({w, "arm-fp16", -1, wg});
  return out;
}

class WinogradF16Test : public TemplateTest {};

TEST_P(WinogradF16Test, MatchesReference) {
  check();
}

INSTANTIATE_TEST_SUITE_P(WinogradF16, WinogradF16Test, ::testing::ValuesIn(cases()),
                         template_case_name);

// The batched GEMM runs `fmla .8h` (4 tiles x 2 vectors per channel), the transforms and
// block sums f32 arithmetic; f16_acc 0 has no f16 multiply-add at all.
TEST(WinogradF16, GemmUsesFmla8h) {
  const auto& wg = schedules::conv2d_winograd_template();
  Workload w = conv3x3(1, 64, 16, 16, 64, 1);
  std::string s = template_assembly(wg, w, "arm-fp16");
  EXPECT_GE(count_instructions(s, "fmla", ".8h"), 8) << s;
  EXPECT_GE(count_instructions(s, "fadd", ".4s"), 8) << s;
  std::string f32 = template_assembly(wg, w, "arm-fp16", {{"f16_acc", 0}});
  EXPECT_EQ(count_instructions(f32, "fmla", ".8h"), 0) << f32;
}

TEST(WinogradF16, RefusedWithoutFullFp16) {
  const auto& wg = schedules::conv2d_winograd_template();
  Workload w = conv3x3(1, 8, 8, 8, 8, 1);
  EXPECT_TRUE(wg.applies(w, target_from_name("arm-fp16")));
  // Offered to tuning, not the untuned default (no ARM hardware timing yet).
  EXPECT_FALSE(schedules::winograd_preferred(conv3x3(1, 64, 56, 56, 64, 1),
                                             target_from_name("arm-fp16")));
  for (const char* name : {"arm-neon", "x86-avx512", "x86-avx2"}) {
    Target t = target_from_name(name);
    EXPECT_FALSE(wg.applies(w, t)) << name;
    EXPECT_FALSE(schedules::winograd_preferred(w, t)) << name;
    EXPECT_THROW(wg.instantiate(w, t, wg.fallback(w, target_from_name("arm-fp16"))), UserError)
        << name;
  }
}

}  // namespace
}  // namespace kiln::testing
