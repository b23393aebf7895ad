// conv2d.int8.depthwise (schedules/conv2d/int8.h) against its exact integer reference: u8 and
// i8 data with zero points at the ends of their range, int8 weights, int32 bias, requantized
// output (fused Relu bounds included) or the int32 sum; 3x3 and 5x5 kernels, strides,
// padding, dilation, channel counts no block divides, and a kernel too large for exact f32
// sums (the int32 path). AVX2 and AVX-512 natively (where this CPU has them), AArch64 under
// qemu.
#include <gtest/gtest.h>

#include "compiler/base/error.h"
#include "schedules/conv2d/int8.h"
#include "schedules/registry.h"
#include "tests/kernels/int8_check.h"

namespace kiln::testing {
namespace {

using ir::DataType;
using schedules::Config;
using schedules::OpTemplate;
using schedules::Workload;

const OpTemplate& tpl() {
  return schedules::conv2d_int8_depthwise_template();
}

Workload depthwise(Int8Conv c) {
  c.o = c.c;
  Workload w = int8_conv(c);
  w.params["groups"] = c.c;
  return w;
}

std::vector<TemplateCase> cases() {
  const DataType u8 = DataType::u8(), i8 = DataType::i8();
  // The int32 sum is compared through f32: exact below 2^24.
  const std::vector<Workload> convs = {
      depthwise({32, 14, 0, 3, 1, 1, 1, u8, 128}),                       // MobileNet's 3x3
      depthwise({24, 15, 0, 3, 2, 1, 1, u8, 255}),                       // stride 2, odd size
      depthwise({20, 9, 0, 5, 1, 2, 1, i8, -128, false}),                // 5x5, no bias, i8
      depthwise({40, 8, 0, 3, 1, 2, 2, i8, 127, true, true, -20, -20}),  // dilated, Relu
      depthwise({13, 6, 0, 3, 1, 1, 1, u8, 0, true, false}),             // the int32 sum
      depthwise({8, 30, 0, 23, 1, 11, 1, u8, 7}),                        // 529 taps: int32 sums
  };
  std::vector<TemplateCase> out;
  for (const Workload& w : convs)
    for (int cfg = -1; cfg < 2; ++cfg) out.push_back({w, "x86-avx2", cfg, &tpl()});
  for (const Workload& w : convs) out.push_back({w, "x86-avx512", -1, &tpl()});
  for (size_t i : {0, 2, 5}) out.push_back({convs[i], "arm-neon", -1, &tpl()});
  return out;
}

class Int8DepthwiseTest : public Int8TemplateTest {};

TEST_P(Int8DepthwiseTest, MatchesExactReference) {
  check_case();
}

INSTANTIATE_TEST_SUITE_P(Int8Depthwise, Int8DepthwiseTest, ::testing::ValuesIn(cases()),
                         template_case_name);

TEST(Int8DepthwiseSpace, EveryKnobValue) {
  const Workload w = depthwise({20, 9, 0, 3, 1, 1, 1, DataType::u8(), 90});
  const Target t = target_from_name("x86-avx2");
  for (const Config& cfg : knob_sweep(
           tpl(), w, t, {"c_bn", "reg_n", "unroll_kw", "oc_inner", "parallel", "pad_rows"})) {
    const std::string skip = check_int8(tpl(), w, "x86-avx2", cfg);
    if (!skip.empty()) GTEST_SKIP() << skip;
  }
}

TEST(Int8DepthwiseChoice, TheDefaultForIntegerDepthwiseConvsOnly) {
  const Target t = target_from_name("x86-avx2");
  const Workload w = depthwise({16, 8, 0, 3, 1, 1, 1, DataType::u8(), 3});
  EXPECT_EQ(schedules::templates_for(w, t).front()->name(), "conv2d.int8.depthwise");
  // Groups 1, or a channel multiplier, are not depthwise; a float depthwise is not integer.
  EXPECT_FALSE(tpl().applies(int8_conv({16, 8, 16, 3, 1, 1}), t));
  Workload mult = depthwise({16, 8, 0, 3, 1, 1});
  mult.params["O"] = 32;
  EXPECT_FALSE(tpl().applies(mult, t));
  EXPECT_THROW(tpl().instantiate(mult, t, tpl().fallback(w, t)), UserError);
  Workload f = w;
  f.dtype = DataType::f32();
  EXPECT_FALSE(tpl().applies(f, t));
}

}  // namespace
}  // namespace kiln::testing
