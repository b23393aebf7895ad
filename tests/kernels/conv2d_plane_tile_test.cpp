// conv2d.nchwc's plane tile (the ic_chunk knob, schedules/conv2d/plane_tile.h): which
// layers the fallback gives it, and its kernels against the reference for every chunk on
// awkward shapes (odd planes, channels that are not a multiple of the block, stride 2,
// residual), on x86-avx512, x86-avx2 and arm-neon (qemu), plus random configs of the
// widened space with the plane tile forced on and ResNet-18's layer4 shape natively.
#include <gtest/gtest.h>

#include <random>

#include "schedules/conv2d/templates.h"
#include "tests/kernels/template_harness.h"

namespace kiln::testing {
namespace {

using ir::DataType;
using schedules::Config;
using schedules::Workload;

Workload conv(int64_t c, int64_t hw, int64_t o, int64_t k, int64_t stride, int64_t pad,
              std::vector<std::string> epilogue = {}) {
  return Workload{"conv2d",
                  {{"N", 1}, {"C", c}, {"H", hw}, {"W", hw}, {"O", o}, {"KH", k}, {"KW", k},
                   {"stride", stride}, {"pad", pad}},
                  DataType::f32(),
                  std::move(epilogue)};
}

const schedules::OpTemplate& nchwc() { return schedules::conv2d_nchwc_template(); }

TEST(Conv2dPlaneTile, FallbackTakesItForSmallPlanesWithManyChannels) {
  Target t = target_from_name("x86-avx512");
  auto chunk = [&](const Workload& w) { return nchwc().fallback(w, t)["ic_chunk"]; };
  EXPECT_GT(chunk(conv(512, 7, 512, 3, 1, 1)), 0);   // ResNet-18 layer4
  EXPECT_GT(chunk(conv(256, 14, 512, 3, 2, 1)), 0);  // layer4.0 conv1, 14 -> 7
  EXPECT_GT(chunk(conv(256, 14, 256, 3, 1, 1)), 0);  // layer3 (and ResNet-50's)
  EXPECT_EQ(chunk(conv(64, 56, 64, 3, 1, 1)), 0);    // large plane: the row tile
  EXPECT_EQ(chunk(conv(32, 7, 32, 3, 1, 1)), 0);     // few channels: nothing to stream
  EXPECT_EQ(chunk(conv(256, 14, 512, 1, 2, 0)), 0);  // 1x1: its weight panel fits L1
  EXPECT_EQ(chunk(conv(512, 1, 512, 1, 1, 0)), 0);   // one row: nothing to revisit
}

// The rule reads the target's L1: an 18x18 plane's accumulators (41 KB) fit a 48 KiB L1 and
// not a 32 KiB one, so the same layer takes the plane tile on Ice Lake-SP and not on
// Skylake-SP, whose AVX-512 code is otherwise the same.
TEST(Conv2dPlaneTile, TheTargetsL1DecidesWhereThePlaneFits) {
  const Workload w = conv(128, 18, 64, 3, 1, 1);
  ASSERT_EQ(target_from_name("skylake-avx512").l1d_kib, 32);
  ASSERT_EQ(target_from_name("icelake-server").l1d_kib, 48);
  EXPECT_EQ(nchwc().fallback(w, target_from_name("skylake-avx512"))["ic_chunk"], 0);
  EXPECT_GT(nchwc().fallback(w, target_from_name("icelake-server"))["ic_chunk"], 0);
  EXPECT_EQ(nchwc().fallback(w, target_from_name("x86-avx512"))["ic_chunk"], 0);
}

TEST(Conv2dPlaneTile, OlderLogsKeepTheRowTile) {
  Target t = target_from_name("x86-avx512");
  Workload w = conv(512, 7, 512, 3, 1, 1);
  // An older record's config has no ic_chunk: it gets the legacy default, the row tile.
  EXPECT_EQ(nchwc().space(w, t).legacy_defaults()["ic_chunk"], 0);
}

struct Shape {
  Workload w;
  const char* what;
};

// Small enough for qemu; channels spanning several blocks so chunks of 1, 2 and 4 differ.
std::vector<Shape> awkward() {
  return {
      {conv(40, 7, 24, 3, 1, 1, {"bias", "relu"}), "7x7, C and O not block multiples"},
      {conv(36, 9, 20, 3, 2, 1, {"bias", "residual", "relu"}), "odd 9x9 stride 2"},
      {conv(64, 5, 32, 3, 1, 0), "no pad 5x5 -> 3x3"},
      {conv(24, 6, 16, 5, 1, 2, {"residual"}), "5x5 kernel"},
  };
}

void check_chunks(const std::string& target, const Workload& w, const Config& base) {
  for (int64_t chunk : {1, 2, 4}) {
    Config cfg = base;
    cfg.set("ic_chunk", chunk);
    std::string skip = check_template_config(nchwc(), w, target, cfg);
    if (!skip.empty()) GTEST_SKIP() << skip;
  }
}

TEST(Conv2dPlaneTile, EveryChunkMatchesTheReference) {
  for (const std::string target : {"x86-avx512", "x86-avx2", "arm-neon"}) {
    Target t = target_from_name(target);
    std::vector<Shape> shapes = awkward();
    if (target == "arm-neon") shapes.resize(2);  // qemu: two shapes keep the suite fast
    for (const Shape& s : shapes) {
      SCOPED_TRACE(target + ": " + s.what);
      Config base = nchwc().fallback(s.w, t);
      base.set("ic_bn", 8);  // several channel blocks, the last one partial for C = 36, 20
      check_chunks(target, s.w, base);
    }
  }
}

TEST(Conv2dPlaneTile, RandomConfigsWithThePlaneTile) {
  std::mt19937_64 rng(7);
  for (const std::string target : {"x86-avx512", "x86-avx2"}) {
    Target t = target_from_name(target);
    for (const Shape& s : awkward()) {
      auto space = nchwc().space(s.w, t);
      for (int i = 0; i < 2; ++i) {
        Config cfg = space.random(rng);
        if (cfg["ic_chunk"] == 0) cfg.set("ic_chunk", 1 + i);
        SCOPED_TRACE(target + ": " + s.what + " " + cfg.to_json());
        std::string skip = check_template_config(nchwc(), s.w, target, cfg);
        if (!skip.empty()) GTEST_SKIP() << skip;
      }
    }
  }
}

TEST(Conv2dPlaneTile, ResNetLayer4Natively) {
  Workload w = conv(512, 7, 512, 3, 1, 1, {"bias", "residual", "relu"});
  Target t = target_from_name("x86-avx512");
  Config cfg = nchwc().fallback(w, t);
  cfg.set("ic_chunk", 2);
  std::string skip = check_template_config(nchwc(), w, "x86-avx512", cfg);
  if (!skip.empty()) GTEST_SKIP() << skip;
}

}  // namespace
}  // namespace kiln::testing
