// The network compiler's template choice for untuned workloads (network/
// choose_template.h): depthwise convolutions to conv2d.depthwise (with a multiplier to
// conv2d.depthwise_mult), wide 3x3 stride-1 ones to
// conv2d.winograd, 1x1 ones on small planes to conv2d.1x1, channel blocks that follow
// the neighbouring layouts, register tiles narrowed to the fallback's accumulator count.
#include <gtest/gtest.h>

#include "network/choose_template.h"

namespace kiln::network {
namespace {

schedules::Workload conv(int64_t c, int64_t o, int64_t k, int64_t groups, int64_t hw = 56) {
  return {"conv2d",
          {{"N", 1}, {"C", c}, {"H", hw}, {"W", hw}, {"O", o}, {"KH", k}, {"KW", k},
           {"PH", k / 2}, {"PW", k / 2}, {"groups", groups}},
          ir::DataType::f32(),
          {"bias"}};
}

const Target& avx512() {
  static const Target t = target_from_name("x86-avx512");
  return t;
}

TEST(ChooseTemplate, DepthwiseGoesToTheDepthwiseTemplate) {
  tuner::Dispatch d = choose_template(conv(144, 144, 3, 144), avx512(), {});
  EXPECT_EQ(d.tpl->name(), "conv2d.depthwise");
  EXPECT_TRUE(d.untuned);
  // A channel multiplier (O = 2C) goes to its own template, with the fallback's config.
  tuner::Dispatch m = choose_template(conv(32, 64, 3, 32), avx512(), {});
  EXPECT_EQ(m.tpl->name(), "conv2d.depthwise_mult");
  EXPECT_EQ(m.config, m.tpl->fallback(conv(32, 64, 3, 32), avx512()));
  // Grouped but not depthwise stays on the general template.
  EXPECT_EQ(choose_template(conv(64, 64, 3, 2), avx512(), {}).tpl->name(), "conv2d.nchwc");
}

TEST(ChooseTemplate, Wide3x3Stride1GoesToWinograd) {
  tuner::Dispatch d = choose_template(conv(64, 64, 3, 1), avx512(), {});
  EXPECT_EQ(d.tpl->name(), "conv2d.winograd");
  EXPECT_TRUE(d.tpl->space(conv(64, 64, 3, 1), avx512()).contains(d.config));
  // Too few output tiles, too few channels, or not 3x3: direct.
  EXPECT_EQ(choose_template(conv(64, 64, 3, 1, 3), avx512(), {}).tpl->name(), "conv2d.nchwc");
  EXPECT_EQ(choose_template(conv(3, 64, 3, 1), avx512(), {}).tpl->name(), "conv2d.nchwc");
  EXPECT_EQ(choose_template(conv(64, 64, 1, 1), avx512(), {}).tpl->name(), "conv2d.nchwc");
  // The Winograd conv also reads its producer's block.
  tuner::Dispatch n = choose_template(conv(64, 64, 3, 1), avx512(), {}, {32, 0});
  EXPECT_EQ(n.config["ic_bn"], 32);
}

TEST(ChooseTemplate, Small1x1GoesToThe1x1Template) {
  for (int64_t hw : {7, 14}) {
    schedules::Workload w = conv(960, 320, 1, 1, hw);
    tuner::Dispatch d = choose_template(w, avx512(), {}, {32, 0});
    EXPECT_EQ(d.tpl->name(), "conv2d.1x1") << hw;
    EXPECT_EQ(d.config["ic_bn"], 32);
    EXPECT_EQ(d.config["weight_streams"], 2);  // the small-plane fallback
    EXPECT_TRUE(d.tpl->space(w, avx512()).contains(d.config));
  }
  // A larger plane, a 3x3 kernel, groups or half precision: not conv2d.1x1.
  EXPECT_EQ(choose_template(conv(960, 320, 1, 1, 28), avx512(), {}).tpl->name(), "conv2d.nchwc");
  EXPECT_NE(choose_template(conv(16, 32, 3, 1, 7), avx512(), {}).tpl->name(), "conv2d.1x1");
  EXPECT_EQ(choose_template(conv(64, 64, 1, 2, 7), avx512(), {}).tpl->name(), "conv2d.nchwc");
  schedules::Workload half = conv(960, 320, 1, 1, 7);
  half.dtype = ir::DataType::f16();
  EXPECT_NE(choose_template(half, target_from_name("arm-fp16"), {}).tpl->name(), "conv2d.1x1");
}

TEST(ChooseTemplate, WithoutNeighboursItIsTheTemplatesFallback) {
  schedules::Workload w = conv(144, 144, 3, 144);
  tuner::Dispatch d = choose_template(w, avx512(), {});
  EXPECT_EQ(d.config, d.tpl->fallback(w, avx512()));
}

TEST(ChooseTemplate, DepthwiseTakesItsProducersBlockWithANarrowerTile) {
  schedules::Workload w = conv(144, 144, 3, 144);
  schedules::Config fallback = choose_template(w, avx512(), {}).config;
  ASSERT_EQ(fallback["c_bn"], 16);
  tuner::Dispatch d = choose_template(w, avx512(), {}, {32, 0});
  EXPECT_EQ(d.config["c_bn"], 32);
  // Two vectors per pixel: half the pixels keep the accumulator count.
  EXPECT_EQ(d.config["reg_n"], fallback["reg_n"] / 2);
  EXPECT_TRUE(d.tpl->space(w, avx512()).contains(d.config));
}

TEST(ChooseTemplate, ConvReadsTheInputBlockAndWritesTheResidualBlock) {
  schedules::Workload w = conv(144, 24, 1, 1);
  w.epilogue.push_back("residual");
  ASSERT_EQ(choose_template(w, avx512(), {}).config["oc_bn"], 32);
  tuner::Dispatch d = choose_template(w, avx512(), {}, {32, 16});
  EXPECT_EQ(d.config["ic_bn"], 32);  // the fallback takes 16
  EXPECT_EQ(d.config["oc_bn"], 16);
  EXPECT_TRUE(d.tpl->space(w, avx512()).contains(d.config));
}

TEST(ChooseTemplate, ABlockTheSpaceLacksIsIgnored) {
  schedules::Workload w = conv(16, 16, 3, 16);  // 16 channels: only a 16-channel block
  tuner::Dispatch d = choose_template(w, avx512(), {}, {64, 0});
  EXPECT_EQ(d.config, d.tpl->fallback(w, avx512()));
}

}  // namespace
}  // namespace kiln::network
