// conv2d.winograd: fallback and random configs (every output tile size, register tile and
// channel block of the space) against the direct reference on ResNet-18/50 3x3 stride-1
// layers and awkward shapes (odd H/W, channels not a multiple of the block, padding 0 and
// 2, batch 2, outputs smaller than a tile), on every target preset (ARM under qemu); the
// forms it refuses; the tolerance it declares; and the cost rule's answers.
#include <gtest/gtest.h>

#include "compiler/base/error.h"
#include "schedules/conv2d/templates.h"
#include "schedules/conv2d/winograd.h"
#include "schedules/registry.h"
#include "tests/kernels/kernel_harness.h"
#include "tests/kernels/template_harness.h"
#include "tuner/builder.h"
#include "tuner/check_kernel.h"

namespace kiln::testing {
namespace {

using ir::DataType;
using schedules::Workload;

Workload conv3x3(int64_t n, int64_t c, int64_t h, int64_t w, int64_t o, int64_t pad,
                 std::vector<std::string> epi = {}) {
  return Workload{"conv2d",
                  {{"N", n}, {"C", c}, {"H", h}, {"W", w}, {"O", o}, {"KH", 3}, {"KW", 3},
                   {"stride", 1}, {"pad", pad}},
                  DataType::f32(),
                  std::move(epi)};
}


std::vector<TemplateCase> cases() {
  const auto* wg = &schedules::conv2d_winograd_template();
  std::vector<Workload> small = {
      conv3x3(1, 5, 9, 9, 13, 1, {"bias", "relu"}),   // primes, C not a block multiple
      conv3x3(2, 8, 7, 11, 16, 0, {"residual"}),      // batch 2, pad 0, odd H/W
      conv3x3(1, 12, 6, 5, 20, 2, {"bias", "relu6"}), // pad 2
      conv3x3(1, 16, 3, 3, 8, 1),                     // output smaller than one 4x4 tile
  };
  std::vector<TemplateCase> out;
  for (const Workload& w : small) {
    for (const std::string t : {"x86-avx2", "x86-avx512"})
      for (int c = -1; c < 3; ++c) out.push_back({w, t, c, wg});
    for (int c = -1; c < 1; ++c) out.push_back({w, "arm-neon", c, wg});
  }
  for (const std::string t : {"arm-fp16", "arm-bf16"}) out.push_back({small[0], t, -1, wg});
  // ResNet-18/50 3x3 stride-1 layers, natively with the fallback.
  for (const Workload& w : {conv3x3(1, 64, 56, 56, 64, 1, {"bias", "residual", "relu"}),
                            conv3x3(1, 128, 28, 28, 128, 1), conv3x3(1, 256, 14, 14, 256, 1),
                            conv3x3(1, 512, 7, 7, 512, 1, {"bias", "relu"})})
    out.push_back({w, "x86-avx512", -1, wg});
  // A cropped ResNet layer under qemu: the real channel counts on a small image.
  out.push_back({conv3x3(1, 64, 8, 8, 64, 1, {"bias", "relu"}), "arm-neon", -1, wg});
  return out;
}

class WinogradTemplateTest : public TemplateTest {};

TEST_P(WinogradTemplateTest, MatchesReference) {
  check();
}

INSTANTIATE_TEST_SUITE_P(Winograd, WinogradTemplateTest, ::testing::ValuesIn(cases()),
                         template_case_name);

// Every tile size the space offers on AVX-512, and the largest (the most unrolled
// transforms) on NEON under qemu, with the fallback's other knobs, within the tolerance the
// template declares.
TEST(WinogradTemplate, EveryTileSizeMatchesReference) {
  const auto& wg = schedules::conv2d_winograd_template();
  Workload w = conv3x3(1, 8, 9, 9, 16, 1, {"bias"});
  for (const std::string name : {"x86-avx512", "arm-neon"}) {
    Target t = target_from_name(name);
    std::vector<int64_t> ms = schedules::winograd_tile_choices(w);
    if (!t.is_x86()) ms = {ms.back()};
    for (int64_t m : ms) {
      schedules::Config cfg = schedules::winograd_fallback(w, t, m);
      SCOPED_TRACE(name + " " + cfg.to_json());
      tuner::BuiltKernel k = tuner::lower_template(wg, w, t, cfg, "kernel");
      tuner::CheckResult r = tuner::check_built_kernel(wg, w, t, k, test_run_options());
      if (!r.skip_reason.empty()) continue;  // no qemu: the other target still ran
      EXPECT_TRUE(r.comparison.close) << r.comparison.message();
    }
  }
}

TEST(WinogradTemplate, RefusesOtherForms) {
  const auto& wg = schedules::conv2d_winograd_template();
  Target x86 = target_from_name("x86-avx512");
  auto form = [](int64_t k, int64_t stride, int64_t dil, int64_t groups, DataType t) {
    return Workload{"conv2d",
                    {{"N", 1}, {"C", 8}, {"H", 12}, {"W", 12}, {"O", 8}, {"KH", k}, {"KW", k},
                     {"stride", stride}, {"pad", 1}, {"dilation", dil}, {"groups", groups}},
                    t,
                    {}};
  };
  const DataType f32 = DataType::f32();
  EXPECT_TRUE(wg.applies(form(3, 1, 1, 1, f32), x86));
  for (const Workload& w : {form(5, 1, 1, 1, f32), form(1, 1, 1, 1, f32), form(3, 2, 1, 1, f32),
                            form(3, 1, 2, 1, f32), form(3, 1, 1, 2, f32),
                            form(3, 1, 1, 1, DataType::bf16())}) {
    EXPECT_FALSE(wg.applies(w, x86)) << w.str();
    EXPECT_THROW(wg.instantiate(w, x86, wg.fallback(form(3, 1, 1, 1, f32), x86)), UserError)
        << w.str();
    EXPECT_FALSE(schedules::winograd_preferred(w, x86)) << w.str();
  }
  // A tile size outside the space.
  Workload w = form(3, 1, 1, 1, f32);
  schedules::Config c = wg.fallback(w, x86);
  c.set("m", 3);
  EXPECT_THROW(wg.instantiate(w, x86, c), UserError);
  // The registry offers it beside the direct template, which stays the default.
  auto tpls = schedules::templates_for(w, x86);
  ASSERT_EQ(tpls.size(), 2u);
  EXPECT_EQ(tpls.front()->name(), "conv2d.nchwc");
  EXPECT_EQ(tpls.back()->name(), "conv2d.winograd");
}

TEST(WinogradTemplate, TileChoicesAndTolerance) {
  const auto& wg = schedules::conv2d_winograd_template();
  // A 56x56 output takes every tile size; the tolerance covers the largest.
  Workload big = conv3x3(1, 64, 56, 56, 64, 1);
  std::vector<int64_t> ms = schedules::winograd_tile_choices(big);
  ASSERT_FALSE(ms.empty());
  EXPECT_EQ(ms.front(), 2);
  EXPECT_DOUBLE_EQ(wg.tolerance_scale(big), schedules::winograd_error_scale(ms.back()));
  EXPECT_EQ(ms, (std::vector<int64_t>{2, 4, 6}));
  // Errors grow with the reduction: very wide inputs lose F(6), then F(4).
  EXPECT_EQ(schedules::winograd_tile_choices(conv3x3(1, 4096, 14, 14, 64, 1)),
            (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(schedules::winograd_tile_choices(conv3x3(1, 16384, 14, 14, 64, 1)),
            std::vector<int64_t>{2});
  // A 2x2 output would be mostly padding in 4x4 or 6x6 tiles: only F(2) is offered.
  EXPECT_EQ(schedules::winograd_tile_choices(conv3x3(1, 16, 2, 2, 8, 1)),
            std::vector<int64_t>{2});
  // Larger tiles err more.
  EXPECT_LT(schedules::winograd_error_scale(2), schedules::winograd_error_scale(4));
}

}  // namespace
}  // namespace kiln::testing

namespace kiln::testing {
namespace {

// Not a test: the max error (kiln's rule, relative to max(1, |want|, rms)) of every tile
// size on ResNet-18's 3x3 stride-1 layers and a small random shape, beside the direct
// template's, for bench/README.md (run with --gtest_also_run_disabled_tests).
TEST(WinogradAccuracy, DISABLED_ErrorPerTileSize) {
  Target t = target_from_name("x86-avx512");
  if (!host_can_run(t)) GTEST_SKIP() << "host cannot run x86-avx512";
  const auto& wg = schedules::conv2d_winograd_template();
  const auto& direct = schedules::conv2d_nchwc_template();
  tuner::RunOptions o = test_run_options();
  for (const Workload& w : {conv3x3(1, 16, 13, 13, 24, 1), conv3x3(1, 64, 56, 56, 64, 1),
                            conv3x3(1, 128, 28, 28, 128, 1), conv3x3(1, 256, 14, 14, 256, 1),
                            conv3x3(1, 512, 7, 7, 512, 1)}) {
    auto error = [&](const schedules::OpTemplate& tpl, const schedules::Config& cfg) {
      tuner::BuiltKernel k = tuner::lower_template(tpl, w, t, cfg, "kernel");
      return tuner::check_built_kernel(tpl, w, t, k, o).comparison.max_error;
    };
    std::printf("%-70s direct %.2e", w.str().c_str(), error(direct, direct.fallback(w, t)));
    std::vector<int64_t> ms = schedules::winograd_tile_choices(w);
    if (!t.is_x86()) ms = {ms.back()};
    for (int64_t m : ms) {
      schedules::Config cfg = schedules::winograd_fallback(w, t, m);
      std::printf("  F(%lld) %.2e", static_cast<long long>(m), error(wg, cfg));
    }
    std::printf("\n");
  }
}

}  // namespace
}  // namespace kiln::testing

namespace kiln::testing {
namespace {

// The cost rule and the fallback's tile size on ResNet-18's 3x3 stride-1 layers (the
// measured table in bench/README.md) and on forms where Winograd does not pay.
TEST(WinogradCostRule, PicksByLayer) {
  Target t = target_from_name("x86-avx512");
  EXPECT_TRUE(schedules::winograd_preferred(conv3x3(1, 64, 56, 56, 64, 1), t));
  EXPECT_TRUE(schedules::winograd_preferred(conv3x3(1, 128, 28, 28, 128, 1), t));
  EXPECT_TRUE(schedules::winograd_preferred(conv3x3(1, 256, 14, 14, 256, 1), t));
  // 16 tiles: F(2) wins alone but loses in the network, where its weights come cold.
  EXPECT_FALSE(schedules::winograd_preferred(conv3x3(1, 512, 7, 7, 512, 1), t));
  EXPECT_FALSE(schedules::winograd_preferred(conv3x3(1, 512, 5, 5, 512, 1), t));  // 9 tiles
  EXPECT_FALSE(schedules::winograd_preferred(conv3x3(1, 3, 224, 224, 64, 1), t));  // stem-like
  EXPECT_EQ(schedules::winograd_fallback_tile(conv3x3(1, 64, 56, 56, 64, 1)), 4);
  EXPECT_EQ(schedules::winograd_fallback_tile(conv3x3(1, 128, 28, 28, 128, 1)), 4);
  EXPECT_EQ(schedules::winograd_fallback_tile(conv3x3(1, 256, 14, 14, 256, 1)), 2);
  EXPECT_EQ(schedules::winograd_fallback_tile(conv3x3(1, 512, 7, 7, 512, 1)), 2);
  // With 256-bit vectors F(2)'s 16 tiles at 7x7 won in the network too (bench/README.md);
  // 9 tiles and the stem stay direct there as well.
  Target avx2 = target_from_name("x86-avx2");
  EXPECT_TRUE(schedules::winograd_preferred(conv3x3(1, 512, 7, 7, 512, 1), avx2));
  EXPECT_TRUE(schedules::winograd_preferred(conv3x3(1, 64, 56, 56, 64, 1), avx2));
  EXPECT_FALSE(schedules::winograd_preferred(conv3x3(1, 512, 5, 5, 512, 1), avx2));
  EXPECT_FALSE(schedules::winograd_preferred(conv3x3(1, 3, 224, 224, 64, 1), avx2));
  EXPECT_FALSE(
      schedules::winograd_preferred(conv3x3(1, 512, 7, 7, 512, 1), target_from_name("arm-neon")));
}

}  // namespace
}  // namespace kiln::testing
