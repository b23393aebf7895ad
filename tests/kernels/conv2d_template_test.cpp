// conv2d.nchwc, conv2d.1x1, conv2d.depthwise: fallback and random configs over a table of
// shapes (ResNet-18/50 and MobileNetV2 layers, awkward primes, 1x1 spatial, batch > 1,
// dilation, groups) and epilogues, on every target preset and the dtypes it has; plus the
// user errors for bad shapes and dtypes. Full-size layers run natively with the fallback;
// ARM (qemu) gets small shapes and few configs to stay inside the suite's time budget.
// Built with KILN_CONV_SLOW_SWEEP (the conv2d_slow_test executable, label slow) it widens
// the sweep: more random configs, full-size layers on AVX2 and with a random config.
#include <gtest/gtest.h>

#include <cstdio>
#include <sstream>

#include "compiler/base/error.h"
#include "compiler/ir/printer.h"
#include "compiler/lower/lower.h"
#include "schedules/conv2d/common.h"
#include "schedules/conv2d/templates.h"
#include "schedules/registry.h"
#include "tests/kernels/template_harness.h"
#include "tuner/builder.h"
#include "tuner/check_kernel.h"

namespace kiln::testing {
namespace {

using ir::DataType;
using schedules::OpTemplate;
using schedules::Workload;

struct Geo {
  int64_t n, c, h, w, o, kh, kw, stride = 1, pad = 0, dilation = 1, groups = 1;
};

Workload conv(const Geo& g, DataType t = DataType::f32(), std::vector<std::string> epi = {}) {
  return Workload{"conv2d",
                  {{"N", g.n}, {"C", g.c}, {"H", g.h}, {"W", g.w}, {"O", g.o}, {"KH", g.kh},
                   {"KW", g.kw}, {"stride", g.stride}, {"pad", g.pad},
                   {"dilation", g.dilation}, {"groups", g.groups}},
                  t,
                  std::move(epi)};
}

#ifdef KILN_CONV_SLOW_SWEEP
bool slow_sweep() { return true; }
#else
bool slow_sweep() { return false; }
#endif

const std::vector<std::string> kX86 = {"x86-avx2", "x86-avx512"};
const std::vector<std::string> kArm = {"arm-neon", "arm-fp16", "arm-bf16"};

std::vector<TemplateCase> cases() {
  const auto& nchwc = schedules::conv2d_nchwc_template();
  const auto& one = schedules::conv2d_1x1_template();
  const auto& dw = schedules::conv2d_depthwise_template();
  const DataType f32 = DataType::f32();
  struct Small {
    const OpTemplate* tpl;
    Workload w;
  };
  // Small and awkward shapes: every target, fallback and random configs.
  std::vector<Small> small = {
      {&nchwc, conv({1, 5, 9, 9, 13, 3, 3, 1, 1}, f32, {"bias", "relu"})},  // primes
      {&nchwc, conv({1, 3, 11, 11, 7, 3, 3, 2, 1})},                        // 3->7 stride 2
      {&nchwc, conv({2, 8, 9, 9, 16, 3, 3, 1, 2, 2}, f32, {"residual"})},   // batch 2, dilation 2
      {&nchwc, conv({1, 8, 6, 6, 12, 3, 3, 1, 1, 1, 2}, f32, {"bias", "relu6"})},  // groups 2
      // Groups the blocks fit (channel_parts): ResNeXt's 4-channel groups, RegNet's 8 with
      // stride 2, 16-channel groups, and more outputs than inputs per group.
      {&nchwc, conv({1, 32, 7, 7, 32, 3, 3, 1, 1, 1, 8}, f32, {"bias", "relu"})},
      {&nchwc, conv({1, 48, 9, 9, 48, 3, 3, 2, 1, 1, 6})},
      {&nchwc, conv({1, 64, 6, 6, 64, 3, 3, 1, 1, 1, 4}, f32, {"residual"})},
      {&nchwc, conv({1, 24, 7, 7, 48, 3, 3, 1, 1, 1, 3}, f32, {"bias", "silu"})},
      {&nchwc, conv({1, 40, 7, 7, 40, 3, 3, 2, 1, 1, 5}, f32, {"bias", "relu"})},  // 5 groups
      {&nchwc, conv({2, 16, 1, 1, 8, 1, 1})},                                      // 1x1 spatial
      {&nchwc, conv({1, 3, 16, 16, 8, 7, 7, 2, 3})},  // stem-like 7x7 s2
      {&one, conv({1, 16, 7, 7, 24, 1, 1}, f32, {"bias"})},
      {&one, conv({2, 13, 5, 6, 7, 1, 1, 2}, f32, {"bias", "relu6"})},  // primes, stride 2
      {&one, conv({1, 32, 4, 4, 16, 1, 1}, f32, {"residual", "relu"})},
      // Small planes (pixel blocks, K chunks, weight streams): 7x7 and 14x14 with channels
      // that are not whole blocks, 1x1 spatial, an odd plane.
      {&one, conv({1, 200, 7, 7, 40, 1, 1}, f32, {"bias", "residual"})},
      {&one, conv({1, 24, 14, 14, 20, 1, 1}, f32, {"bias", "hard_swish"})},
      {&nchwc, conv({1, 6, 9, 9, 20, 3, 3, 1, 1}, f32, {"bias", "mish"})},
      {&one, conv({1, 130, 1, 1, 33, 1, 1})},
      {&one, conv({1, 150, 9, 11, 19, 1, 1}, f32, {"bias"})},
      {&dw, conv({1, 16, 9, 9, 16, 3, 3, 1, 1, 1, 16}, f32, {"bias", "relu6"})},
      {&dw, conv({1, 7, 10, 10, 7, 3, 3, 2, 1, 1, 7})},                   // prime, stride 2
      {&dw, conv({2, 8, 8, 8, 8, 5, 5, 1, 4, 2, 8}, f32, {"residual"})},  // dilation 2
  };
  std::vector<TemplateCase> out;
  const int x86_random = slow_sweep() ? 8 : 2, arm_random = slow_sweep() ? 3 : 1;
  for (const Small& s : small) {
    for (const std::string& t : kX86)
      for (int c = -1; c < x86_random; ++c) out.push_back({s.w, t, c, s.tpl});
    for (int c = -1; c < arm_random; ++c) out.push_back({s.w, "arm-neon", c, s.tpl});
  }
  // The other ARM presets: one shape per template in f32 (same codegen as arm-neon).
  for (const std::string t : {"arm-fp16", "arm-bf16"})
    for (size_t i : {size_t(0), size_t(10), size_t(17)})
      out.push_back({small[i].w, t, -1, small[i].tpl});
  // Half precision where the target has it.
  auto halves = half_targets();
  halves.push_back({"arm-bf16", DataType::f16()});
  for (const auto& [t, d] : halves) {
    int random = t.rfind("x86", 0) == 0 ? 1 : 0;
    for (int c = -1; c < random; ++c) {
      out.push_back({conv({1, 6, 7, 7, 10, 3, 3, 1, 1}, d, {"bias", "relu"}), t, c, &nchwc});
      out.push_back({conv({1, 12, 5, 5, 20, 1, 1}, d, {"bias"}), t, c, &one});
      out.push_back({conv({1, 12, 8, 8, 12, 3, 3, 1, 1, 1, 12}, d, {"relu6"}), t, c, &dw});
    }
  }
  // Real layer shapes, natively with the fallback. ResNet-18/50 and MobileNetV2.
  std::vector<Small> big = {
      {&nchwc, conv({1, 64, 56, 56, 64, 3, 3, 1, 1}, f32, {"bias", "residual", "relu"})},
      {&nchwc, conv({1, 64, 56, 56, 128, 3, 3, 2, 1})},
      {&nchwc, conv({1, 128, 28, 28, 128, 3, 3, 1, 1})},
      {&nchwc, conv({1, 256, 14, 14, 256, 3, 3, 1, 1}, f32, {"bias", "relu"})},
      // ResNet-18 layer4: an f32 sum of 512*9 products; elements that cancel to near zero
      // are judged against the output's RMS (tuner::compare), not their own magnitude.
      {&nchwc, conv({1, 512, 7, 7, 512, 3, 3, 1, 1})},
      {&nchwc, conv({1, 3, 224, 224, 64, 7, 7, 2, 3}, f32, {"bias", "relu"})},  // stem
      {&one, conv({1, 64, 56, 56, 128, 1, 1, 2})},    // ResNet-18 downsample
      {&one, conv({1, 256, 14, 14, 512, 1, 1, 2})},
      {&one, conv({1, 256, 56, 56, 64, 1, 1}, f32, {"bias", "relu"})},  // ResNet-50 reduce
      {&one, conv({1, 24, 56, 56, 144, 1, 1}, f32, {"bias", "relu6"})},  // MobileNetV2 expand
      {&one, conv({1, 144, 56, 56, 24, 1, 1}, f32, {"bias", "residual"})},  // project
      {&one, conv({1, 960, 7, 7, 320, 1, 1}, f32, {"bias"})},  // MobileNetV2 7x7
      {&one, conv({1, 576, 14, 14, 96, 1, 1}, f32, {"bias", "residual"})},  // and 14x14
      {&dw, conv({1, 144, 56, 56, 144, 3, 3, 1, 1, 1, 144}, f32, {"bias", "relu6"})},
      {&dw, conv({1, 96, 112, 112, 96, 3, 3, 2, 1, 1, 96}, f32, {"bias", "relu6"})},
  };
  for (const Small& s : big) out.push_back({s.w, "x86-avx512", -1, s.tpl});
  if (slow_sweep())
    for (const Small& s : big) {
      out.push_back({s.w, "x86-avx2", -1, s.tpl});
      out.push_back({s.w, "x86-avx512", 0, s.tpl});
    }
  // A cropped ResNet layer under qemu: the real channel counts on a small image.
  out.push_back(
      {conv({1, 64, 6, 6, 64, 3, 3, 1, 1}, f32, {"bias", "relu"}), "arm-neon", -1, &nchwc});
  return out;
}

class Conv2dTemplateTest : public TemplateTest {};

TEST_P(Conv2dTemplateTest, MatchesReference) {
  check();
}

INSTANTIATE_TEST_SUITE_P(Conv2d, Conv2dTemplateTest, ::testing::ValuesIn(cases()),
                         template_case_name);

TEST(Conv2dTemplateErrors, BadShapes) {
  const auto& t = schedules::conv2d_nchwc_template();
  Target x86 = target_from_name("x86-avx512");
  Workload good = conv({1, 8, 8, 8, 8, 3, 3, 1, 1});
  schedules::Config cfg = t.fallback(good, x86);
  auto instantiate = [&](const Workload& w) { return t.instantiate(w, x86, cfg); };
  EXPECT_THROW(instantiate(conv({1, 0, 8, 8, 8, 3, 3, 1, 1})), UserError);     // zero channels
  EXPECT_THROW(instantiate(conv({1, 8, 8, 8, 0, 3, 3, 1, 1})), UserError);     // zero outputs
  EXPECT_THROW(instantiate(conv({-1, 8, 8, 8, 8, 3, 3, 1, 1})), UserError);    // negative batch
  EXPECT_THROW(instantiate(conv({1, 8, 8, -8, 8, 3, 3, 1, 1})), UserError);    // negative width
  EXPECT_THROW(instantiate(conv({1, 8, 8, 8, 8, 3, 3, 0, 1})), UserError);     // zero stride
  EXPECT_THROW(instantiate(conv({1, 8, 8, 8, 8, 3, 3, 1, -1})), UserError);    // negative pad
  EXPECT_THROW(instantiate(conv({1, 8, 8, 8, 8, 3, 3, 1, 1, 0})), UserError);  // zero dilation
  // Kernel larger than the padded input (also through dilation).
  EXPECT_THROW(instantiate(conv({1, 8, 4, 4, 8, 7, 7, 1, 1})), UserError);
  EXPECT_THROW(instantiate(conv({1, 8, 5, 5, 8, 3, 3, 1, 0, 3})), UserError);
  // Channels not divisible by groups; zero groups.
  EXPECT_THROW(instantiate(conv({1, 6, 8, 8, 8, 3, 3, 1, 1, 1, 4})), UserError);
  EXPECT_THROW(instantiate(conv({1, 8, 8, 8, 6, 3, 3, 1, 1, 1, 4})), UserError);
  EXPECT_THROW(instantiate(conv({1, 8, 8, 8, 8, 3, 3, 1, 1, 1, 0})), UserError);
  // Missing parameter.
  Workload missing{"conv2d", {{"N", 1}, {"C", 8}, {"H", 8}, {"W", 8}, {"O", 8}}, DataType::f32(), {}};
  EXPECT_THROW(t.inputs(missing), UserError);
}

// A grouped conv whose groups the blocks fit packs each output block's weights over its own
// groups' input channels only: ResNeXt-50's first grouped layer (32 groups of 4 channels)
// holds 2 groups per 8-lane block on AVX2 and 4 per 16-lane block on AVX-512, so its kernel
// does 2x and 4x the grouped FLOPs, not the 32x of weights block-diagonal over all 128 inputs.
TEST(Conv2dTemplateGroups, FallbackBlocksReadOnlyTheirGroupsChannels) {
  const auto& nchwc = schedules::conv2d_nchwc_template();
  const Workload resnext = conv({1, 128, 56, 56, 128, 3, 3, 1, 1, 1, 32});
  for (const auto& [target, groups_per_block] :
       {std::pair<const char*, int64_t>{"x86-avx2", 2}, {"x86-avx512", 4}, {"arm-neon", 1}}) {
    Target t = target_from_name(target);
    const schedules::ScheduledKernel k = nchwc.instantiate(resnext, t, nchwc.fallback(resnext, t));
    const auto weight =
        std::find_if(k.args.begin(), k.args.end(),
                     [](const schedules::KernelArg& a) { return a.logical.name == "weight"; });
    ASSERT_NE(weight, k.args.end());
    EXPECT_EQ(weight->kernel_elements, 128 * 4 * groups_per_block * 9) << target;
  }
  // Input blocks wider than a part (a network's layout fixed them at 16): each output block
  // reads its part's 8 channels of the one block that holds them, 2x the grouped FLOPs (not
  // the whole block's 16 with the other part's zeros).
  Target avx2 = target_from_name("x86-avx2");
  schedules::Config wide = nchwc.fallback(resnext, avx2);
  wide.set("ic_bn", 16);
  EXPECT_EQ(nchwc.instantiate(resnext, avx2, wide).args[1].kernel_elements, 128 * 8 * 9);
  // RegNet-Y-400MF's 55 groups of 8 in 16-channel output blocks (the last holds one group) and
  // the 32-channel input blocks its network fixes: each output block reads its 16 channels of
  // one input block.
  const Workload regnet = conv({1, 440, 14, 14, 440, 3, 3, 2, 1, 1, 55});
  schedules::Config fixed = nchwc.fallback(regnet, avx2);
  fixed.set("oc_bn", 16);
  fixed.set("ic_bn", 32);
  EXPECT_EQ(nchwc.instantiate(regnet, avx2, fixed).args[1].kernel_elements, 28 * 1 * 9 * 16 * 16);
  // Both run right, where the part begins inside the block (every other part) and at its
  // start, and so does RegNet-X's stride-2 layer of groups of 16 in blocks of 32, on AVX-512
  // and on NEON (under qemu).
  for (const std::string skip : {check_template_config(nchwc, resnext, "x86-avx2", wide),
                                 check_template_config(nchwc, regnet, "x86-avx2", fixed)})
    if (!skip.empty()) GTEST_SKIP() << skip;
  const Workload regnet_x =
      conv({1, 64, 20, 20, 64, 3, 3, 2, 1, 1, 4}, DataType::f32(), {"bias", "relu"});
  for (const char* target : {"x86-avx512", "arm-neon"}) {
    schedules::Config cfg = nchwc.fallback(regnet_x, target_from_name(target));
    cfg.set("oc_bn", 16);
    cfg.set("ic_bn", 32);
    const std::string skip = check_template_config(nchwc, regnet_x, target, cfg);
    if (!skip.empty()) GTEST_SKIP() << skip;
  }
  // Blocks that do not fit the groups (12 outputs per group, 8-lane blocks) read every channel.
  const Workload uneven = conv({1, 24, 8, 8, 24, 3, 3, 1, 1, 1, 2});
  schedules::Config cfg = nchwc.fallback(uneven, avx2);
  const schedules::ScheduledKernel k = nchwc.instantiate(uneven, avx2, cfg);
  const int64_t ocb = cfg["oc_bn"], icb = cfg["ic_bn"];
  EXPECT_EQ(k.args[1].kernel_elements,
            (24 + ocb - 1) / ocb * ocb * ((24 + icb - 1) / icb * icb) * 9);
}

// A stem's image of 3 channels stays in NCHW (blocks of one channel, so a network converts
// nothing before the conv), and its zero-padded copy is written in vectors along W: element
// by element it took three times the conv itself (224x224, 16 outputs: 0.19 -> 0.11 ms).
TEST(Conv2dTemplateStem, AnImageStaysNchwAndItsPaddedCopyIsVectorized) {
  const auto& nchwc = schedules::conv2d_nchwc_template();
  const Workload stem = conv({1, 3, 30, 30, 16, 3, 3, 2, 1}, DataType::f32(), {"bias", "relu"});
  for (const char* target : {"x86-avx2", "x86-avx512", "arm-neon"}) {
    Target t = target_from_name(target);
    schedules::Config cfg = nchwc.fallback(stem, t);
    EXPECT_EQ(cfg["ic_bn"], 1) << target;
    const schedules::ScheduledKernel k = nchwc.instantiate(stem, t, cfg);
    std::ostringstream tir;
    tir << lower::lower(k.schedule, k.tensors, "stem").body;
    EXPECT_NE(tir.str().find("data.pad[ramp("), std::string::npos) << target << "\n" << tir.str();
    const std::string skip = check_template_config(nchwc, stem, target, cfg);
    if (!skip.empty()) GTEST_SKIP() << skip;
  }
  // Four channels and more keep their blocks.
  EXPECT_GT(
      nchwc.fallback(conv({1, 4, 30, 30, 16, 3, 3, 2, 1}), target_from_name("x86-avx2"))["ic_bn"],
      1);
}

// An input past the caches is read once, with the output blocks inside the W tiles
// (pick_oc_inner in conv2d/direct.cpp); smaller inputs, few channel blocks, few output blocks and
// grouped convs keep the blocks outermost.
TEST(Conv2dTemplateLoopOrder, FallbackReusesLargeInputsAcrossOutputBlocks) {
  const auto& nchwc = schedules::conv2d_nchwc_template();
  const auto& one = schedules::conv2d_1x1_template();
  for (const char* target : {"x86-avx2", "x86-avx512", "arm-neon"}) {
    Target t = target_from_name(target);
    auto order = [&](const OpTemplate& tpl, const Geo& g) {
      return tpl.fallback(conv(g), t)["oc_inner"];
    };
    EXPECT_EQ(order(nchwc, {1, 1024, 56, 56, 256, 1, 1}), 2) << target;  // SegFormer's fuse
    EXPECT_EQ(order(one, {1, 1024, 56, 56, 256, 1, 1}), 2) << target;
    EXPECT_EQ(order(nchwc, {1, 256, 56, 56, 256, 3, 3, 1, 1}), 2) << target;
    EXPECT_EQ(order(nchwc, {1, 64, 56, 56, 64, 3, 3, 1, 1}), 0) << target;           // 0.8 MB
    EXPECT_EQ(order(nchwc, {1, 32, 224, 224, 64, 3, 3, 1, 1}), 0) << target;         // 2 blocks
    EXPECT_EQ(order(nchwc, {1, 1024, 56, 56, 32, 1, 1}), 0) << target;               // 1-2 outputs
    EXPECT_EQ(order(nchwc, {1, 256, 56, 56, 256, 3, 3, 1, 1, 1, 32}), 0) << target;  // groups
    EXPECT_EQ(order(one, {1, 1024, 14, 14, 256, 1, 1}), 0) << target;                // small plane
  }
  // The order it picks runs right, on a shape just past the threshold (2 MiB of input).
  const Workload w = conv({1, 128, 64, 64, 64, 1, 1}, DataType::f32(), {"bias", "relu"});
  for (const OpTemplate* tpl : {&nchwc, &one}) {
    const schedules::Config cfg = tpl->fallback(w, target_from_name("x86-avx2"));
    ASSERT_EQ(cfg["oc_inner"], 2) << tpl->name();
    const std::string skip = check_template_config(*tpl, w, "x86-avx2", cfg);
    if (!skip.empty()) GTEST_SKIP() << skip;
  }
}

TEST(Conv2dTemplateErrors, UnsupportedDtypesAndForms) {
  Target x86 = target_from_name("x86-avx512");
  const auto& nchwc = schedules::conv2d_nchwc_template();
  const auto& one = schedules::conv2d_1x1_template();
  const auto& dw = schedules::conv2d_depthwise_template();
  Workload i8 = conv({1, 8, 8, 8, 8, 3, 3, 1, 1}, DataType::i8());
  EXPECT_THROW(nchwc.instantiate(i8, x86, nchwc.fallback(i8, x86)), UserError);
  Workload bad_epi = conv({1, 8, 8, 8, 8, 3, 3, 1, 1}, DataType::f32(), {"softplus"});
  EXPECT_THROW(nchwc.instantiate(bad_epi, x86, nchwc.fallback(bad_epi, x86)), UserError);
  // Templates refuse the forms they do not implement, in applies() and in instantiate().
  Workload k3 = conv({1, 8, 8, 8, 8, 3, 3, 1, 1});
  EXPECT_FALSE(one.applies(k3, x86));
  EXPECT_FALSE(dw.applies(k3, x86));
  EXPECT_THROW(one.space(k3, x86), UserError);
  EXPECT_THROW(dw.space(k3, x86), UserError);
  Workload padded1x1 = conv({1, 8, 8, 8, 8, 1, 1, 1, 1});
  EXPECT_FALSE(one.applies(padded1x1, x86));
  Workload mult2 = conv({1, 8, 8, 8, 16, 3, 3, 1, 1, 1, 8});  // channel multiplier 2
  EXPECT_FALSE(dw.applies(mult2, x86));
  EXPECT_TRUE(nchwc.applies(mult2, x86));
  // A knob value outside the space.
  schedules::Config cfg = nchwc.fallback(k3, x86);
  cfg.set("reg_n", 9);
  EXPECT_THROW(nchwc.instantiate(k3, x86, cfg), UserError);
  // The registry offers every template that applies.
  Workload d = conv({1, 16, 8, 8, 16, 3, 3, 1, 1, 1, 16});
  EXPECT_EQ(schedules::templates_for(d, x86).size(), 2u);  // nchwc and depthwise
  Workload p = conv({1, 16, 8, 8, 32, 1, 1});
  EXPECT_EQ(schedules::templates_for(p, x86).size(), 2u);  // nchwc and 1x1
}

// Not a test: times the fallback of ResNet-18 layers on the host, single thread, for the
// numbers in the report (run with --gtest_also_run_disabled_tests). Speed is never asserted.
TEST(Conv2dTemplateBench, DISABLED_FallbackGflops) {
  Target t = target_from_name("x86-avx512");
  if (!host_can_run(t)) GTEST_SKIP() << "host cannot run x86-avx512";
  const auto& nchwc = schedules::conv2d_nchwc_template();
  const auto& one = schedules::conv2d_1x1_template();
  const auto& dw = schedules::conv2d_depthwise_template();
  std::vector<std::pair<const OpTemplate*, Workload>> layers = {
      {&nchwc, conv({1, 64, 56, 56, 64, 3, 3, 1, 1})},
      {&nchwc, conv({1, 64, 56, 56, 128, 3, 3, 2, 1})},
      {&nchwc, conv({1, 128, 28, 28, 128, 3, 3, 1, 1})},
      {&nchwc, conv({1, 256, 14, 14, 256, 3, 3, 1, 1})},
      {&nchwc, conv({1, 512, 7, 7, 512, 3, 3, 1, 1})},
      {&nchwc, conv({1, 3, 224, 224, 64, 7, 7, 2, 3})},
      {&one, conv({1, 64, 56, 56, 128, 1, 1, 2})},
      {&one, conv({1, 256, 56, 56, 64, 1, 1})},
      {&dw, conv({1, 144, 56, 56, 144, 3, 3, 1, 1, 1, 144})},
  };
  for (int threads : {1, 2})
    for (const auto& [tpl, w] : layers) {
      tuner::RunOptions o;
      o.threads = threads, o.repeat = 15;
      schedules::Config cfg = tpl->fallback(w, t);
      tuner::BuiltKernel k = tuner::lower_template(*tpl, w, t, cfg, "kernel");
      tuner::CheckResult r = tuner::check_built_kernel(*tpl, w, t, k, o);
      EXPECT_TRUE(r.skip_reason.empty()) << r.skip_reason;
      // (512->512 drifts just past 1e-4 from f32 accumulation; see the cases above.)
      std::printf("%-17s %-90s %s threads=%d %8.1f us %6.1f GFLOPS (%s)\n", tpl->name().c_str(),
                  w.str().c_str(), cfg.to_json().c_str(), threads, r.median_ms * 1e3, r.gflops,
                  r.comparison.message().c_str());
    }
}

}  // namespace
}  // namespace kiln::testing
