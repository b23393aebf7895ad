// conv2d.bf16.amx (schedules/conv2d/amx.h): fallback and random configs against the
// reference on awkward shapes (C not a multiple of 32, O not of 16, OW not of the block,
// 1x1 and 5x5 kernels, asymmetric padding, batch 2, epilogues) and on ResNet-18's stride-1
// 3x3 layers, run where the host has AMX and skipped with a message elsewhere. Codegen-only
// checks hold on any host: the kernel's loop is `tdpbf16ps`, non-AMX targets and strides
// other than 1 are refused, and the registry prefers it where AMX is.
#include "schedules/conv2d/amx.h"

#include <gtest/gtest.h>

#include <array>

#include "compiler/base/error.h"
#include "schedules/amx_tile.h"
#include "schedules/registry.h"
#include "tests/kernels/amx_cases.h"
#include "tests/kernels/asm_check.h"
#include "tests/kernels/template_harness.h"

namespace kiln::testing {
namespace {

using ir::DataType;
using schedules::OpTemplate;
using schedules::Workload;

Workload conv(int64_t n, int64_t c, int64_t hw, int64_t o, int64_t k, int64_t pad,
              std::vector<std::string> epilogue = {}) {
  return Workload{"conv2d",
                  {{"N", n}, {"C", c}, {"H", hw}, {"W", hw + 1}, {"O", o}, {"KH", k},
                   {"KW", k}, {"pad", pad}},
                  DataType::bf16(),
                  std::move(epilogue)};
}

Workload resnet(int64_t c, int64_t hw) {
  return Workload{"conv2d",
                  {{"N", 1}, {"C", c}, {"H", hw}, {"W", hw}, {"O", c}, {"KH", 3}, {"KW", 3},
                   {"pad", 1}},
                  DataType::bf16(),
                  {"bias", "relu"}};
}

using Case = AmxCase;

std::vector<Case> cases() {
  std::vector<Case> out;
  for (const Workload& w :
       {conv(1, 32, 9, 32, 3, 1, {"bias", "relu"}), conv(1, 20, 8, 24, 3, 1),
        conv(2, 64, 6, 48, 3, 1, {"bias", "residual", "relu6"}), conv(1, 40, 18, 40, 3, 1),
        conv(1, 64, 7, 16, 1, 0, {"bias"}), conv(1, 32, 11, 32, 5, 2), conv(1, 33, 5, 17, 3, 0)})
    for (int c = -1; c < 2; ++c) out.push_back({w, c});
  for (auto [c, hw] : {std::pair<int64_t, int64_t>{64, 56}, {128, 28}, {256, 14}, {512, 7}})
    out.push_back({resnet(c, hw), -1});
  // Shapes whose flat output positions ((OH - 1) * Wp + OW) are whole blocks, where the
  // accumulators are computed per image and channel block instead of at the root: a 1x1
  // layer (4 x 8 = 32 pixels) and a 3x3 one (1 * 33 + 31 = 64), batch 2; six random configs
  // of the eight (row and column tiles, parallel).
  for (auto [h, w, k, pad] : {std::array<int64_t, 4>{4, 8, 1, 0}, {2, 31, 3, 1}}) {
    Workload plane{"conv2d",
                   {{"N", 2}, {"C", 48}, {"H", h}, {"W", w}, {"O", 40}, {"KH", k}, {"KW", k},
                    {"pad", pad}},
                   DataType::bf16(),
                   {"bias", "relu"}};
    for (int c = -1; c < 6; ++c) out.push_back({plane, c});
  }
  Workload asym = conv(1, 32, 10, 32, 3, 0);
  asym.params.erase("pad");
  asym.params["PH"] = 2;
  asym.params["PW"] = 0;
  out.push_back({asym, -1});
  return out;
}

class AmxConv2dTest : public ::testing::TestWithParam<Case> {};

TEST_P(AmxConv2dTest, MatchesReference) {
  const Case& c = GetParam();
  const OpTemplate& tpl = schedules::conv2d_bf16_amx_template();
  Target host = target_from_name("host");
  if (!schedules::has_amx_bf16(host)) GTEST_SKIP() << kNoAmx;
  ASSERT_TRUE(tpl.applies(c.w, host));
  std::string skip = check_template_config(tpl, c.w, "host", template_config(tpl, c.w, host, c.config));
  if (!skip.empty()) GTEST_SKIP() << skip;
}

INSTANTIATE_TEST_SUITE_P(AmxConv2d, AmxConv2dTest, ::testing::ValuesIn(cases()), amx_case_name);

TEST(AmxConv2dAsm, InnerLoopIsTdpbf16ps) {
  // Codegen only, for the x86-amx preset: holds on any host. The fallback's 2x2 C tiles.
  std::string s =
      template_assembly(schedules::conv2d_bf16_amx_template(), resnet(64, 56), "x86-amx");
  const int dots = count_instructions(s, "tdpbf16ps", "tmm");
  EXPECT_GE(dots, 4) << s;
  EXPECT_EQ(dots % 4, 0) << s;
  EXPECT_GE(count_instructions(s, "ldtilecfg", ""), 1) << s;
  EXPECT_EQ(count_instructions(s, "vdpbf16ps", ""), 0) << s;
}

TEST(AmxConv2dErrors, RefusedWhereItDoesNotApply) {
  const OpTemplate& tpl = schedules::conv2d_bf16_amx_template();
  Workload w = resnet(64, 14);
  for (const char* target : {"x86-avx2", "x86-avx512", "arm-bf16"}) {
    SCOPED_TRACE(target);
    Target t = target_from_name(target);
    EXPECT_FALSE(tpl.applies(w, t));
    EXPECT_THROW(tpl.instantiate(w, t, tpl.fallback(w, t)), UserError);
  }
  Target amx = target_from_name("x86-amx");
  EXPECT_TRUE(tpl.applies(w, amx));
  for (auto [key, value] : {std::pair<const char*, int64_t>{"stride", 2}, {"dilation", 2}, {"groups", 2}}) {
    SCOPED_TRACE(key);
    Workload bad = w;
    bad.params[key] = value;
    EXPECT_FALSE(tpl.applies(bad, amx));
    EXPECT_THROW(tpl.instantiate(bad, amx, tpl.fallback(w, amx)), UserError);
  }
}

TEST(AmxConv2dRegistry, PreferredWhereAmxIs) {
  auto first = [](const Workload& w, const char* target) {
    return schedules::templates_for(w, target_from_name(target)).front()->name();
  };
  EXPECT_EQ(first(resnet(64, 56), "x86-amx"), "conv2d.bf16.amx");
  Workload strided = resnet(64, 56);
  strided.params["stride"] = 2;
  EXPECT_NE(first(strided, "x86-amx"), "conv2d.bf16.amx");
  EXPECT_NE(first(resnet(64, 56), "x86-avx512"), "conv2d.bf16.amx");
}

}  // namespace
}  // namespace kiln::testing
