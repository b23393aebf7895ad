// conv2d.int8 (schedules/conv2d/int8.h) against its exact integer reference: u8 and i8 data
// with a zero point (the padding reads it, so adds nothing), int8 weights, int32 bias,
// requantized output (fused Relu bounds included) or the int32 sum, over the shapes of real
// networks' layers (3x3 and 1x1, strides, padding, dilation, channel counts no block
// divides); AVX2 natively, AVX-512 where this CPU has it, AArch64 under qemu.
#include <gtest/gtest.h>

#include "compiler/base/error.h"
#include "schedules/conv2d/int8.h"
#include "schedules/registry.h"
#include "tests/kernels/asm_check.h"
#include "tests/kernels/int8_check.h"

namespace kiln::testing {
namespace {

using ir::DataType;
using schedules::Config;
using schedules::OpTemplate;
using schedules::Workload;

const OpTemplate& tpl() {
  return schedules::conv2d_int8_template();
}

using Conv = Int8Conv;

Workload workload(const Conv& c) {
  return int8_conv(c);
}

std::string check(const Workload& w, const std::string& target, const Config& cfg) {
  return check_int8(tpl(), w, target, cfg);
}

std::vector<TemplateCase> cases() {
  const DataType i8 = DataType::i8();
  // The int32 sum is compared through f32: exact below 2^24, so C*KH*KW <= 500 where
  // requantize is 0.
  const std::vector<Conv> convs = {
      {16, 14, 32, 3, 1, 1, 1, DataType::u8(), 128},              // ResNet's 3x3
      {32, 9, 24, 1, 1, 0, 1, DataType::u8(), 3},                 // a 1x1 projection
      {3, 17, 16, 3, 2, 1, 1, DataType::u8(), 110},               // a stem: C = 3, stride 2
      {10, 8, 20, 3, 1, 2, 2, i8, -7, false},                     // dilated, no bias
      {24, 7, 40, 1, 2, 0, 1, i8, 0, true, true, -20, -20},       // fused Relu on i8
      {13, 6, 11, 3, 1, 1, 1, DataType::u8(), 200, true, false},  // ConvInteger's int32
  };
  std::vector<TemplateCase> out;
  for (const Conv& c : convs)
    for (int cfg = -1; cfg < 2; ++cfg) out.push_back({workload(c), "x86-avx2", cfg, &tpl()});
  for (const Conv& c : convs) out.push_back({workload(c), "x86-avx512", -1, &tpl()});
  // The pair dots' VNNI form (vpdpwssd), where this CPU runs it.
  for (const Conv& c : convs) out.push_back({workload(c), "cascadelake", -1, &tpl()});
  for (size_t i : {0, 2, 5}) out.push_back({workload(convs[i]), "arm-neon", -1, &tpl()});
  out.push_back({workload(convs[1]), "arm-neon", 1, &tpl()});
  return out;
}

class Conv2dInt8Test : public Int8TemplateTest {};

TEST_P(Conv2dInt8Test, MatchesExactReference) {
  check_case();
}

INSTANTIATE_TEST_SUITE_P(Conv2dInt8, Conv2dInt8Test, ::testing::ValuesIn(cases()),
                         template_case_name);

// Every value of every knob, on a layer no block divides.
TEST(Conv2dInt8Space, EveryKnobValue) {
  const Workload w = workload({10, 9, 20, 3, 1, 1, 1, DataType::u8(), 90});
  const Target t = target_from_name("x86-avx2");
  for (const Config& cfg :
       knob_sweep(tpl(), w, t,
                  {"ic_bn", "oc_bn", "reg_n", "unroll_kw", "k_unroll", "oc_inner", "parallel"})) {
    const std::string skip = check(w, "x86-avx2", cfg);
    if (!skip.empty()) GTEST_SKIP() << skip;
  }
}

TEST(Conv2dInt8Errors, GroupsAndZeroPoints) {
  const Target t = target_from_name("x86-avx2");
  Workload grouped = workload({16, 8, 16, 3, 1, 1});
  grouped.params["groups"] = 4;
  EXPECT_FALSE(tpl().applies(grouped, t));
  Workload bad_zero = workload({16, 8, 16, 3, 1, 1, 1, DataType::u8(), 300});
  EXPECT_THROW(tpl().instantiate(bad_zero, t, tpl().fallback(workload({16, 8, 16, 3}), t)),
               UserError);
  // Integer convs are this template's; float ones never.
  EXPECT_EQ(schedules::templates_for(workload({16, 8, 16, 3}), t).front()->name(), "conv2d.int8");
  Workload f = workload({16, 8, 16, 3});
  f.dtype = DataType::f32();
  EXPECT_FALSE(tpl().applies(f, t) &&
               schedules::templates_for(f, t).front()->name() == "conv2d.int8");
}

TEST(Conv2dInt8Asm, PairDotsOnEveryX86Level) {
  const Workload w = workload({64, 14, 64, 3, 1, 1, 1, DataType::u8(), 128});
  const std::string avx2 = template_assembly(tpl(), w, "x86-avx2");
  EXPECT_GE(count_instructions(avx2, "vpmaddwd", "ymm"), 12) << avx2;  // 2 ymm x 6 pixels
  EXPECT_EQ(count_instructions(avx2, "vpmaddubsw", ""), 0) << avx2;
  const std::string vnni = template_assembly(tpl(), w, "x86-amx");
  EXPECT_GE(count_instructions(vnni, "vpdpwssd", "zmm"), 24) << vnni;  // 2 zmm x 12 pixels
  EXPECT_EQ(count_instructions(vnni, "vpdpwssd", "rsp"), 0) << "accumulators spilled:\n" << vnni;
}

}  // namespace
}  // namespace kiln::testing
