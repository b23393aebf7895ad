// conv2d.depthwise_mult (schedules/conv2d/depthwise_mult.h): depthwise convolutions with a
// channel multiplier k > 1 against the grouped reference, fallback and random configs on
// every target preset (ARM under qemu) and the half dtypes; the forms it refuses; and the
// registry offering it beside conv2d.nchwc (the network compiler's pick is in
// tests/network/choose_template_test.cpp).
#include <gtest/gtest.h>

#include <algorithm>

#include "compiler/base/error.h"
#include "schedules/conv2d/depthwise_mult.h"
#include "schedules/registry.h"
#include "tests/kernels/template_harness.h"

namespace kiln::testing {
namespace {

using ir::DataType;
using schedules::Workload;

Workload dw(int64_t n, int64_t c, int64_t hw, int64_t mult, int64_t k, int64_t stride,
            int64_t pad, DataType t = DataType::f32(), std::vector<std::string> epi = {},
            int64_t dilation = 1) {
  return Workload{"conv2d",
                  {{"N", n}, {"C", c}, {"H", hw}, {"W", hw}, {"O", c * mult}, {"KH", k},
                   {"KW", k}, {"stride", stride}, {"pad", pad}, {"dilation", dilation},
                   {"groups", c}},
                  t,
                  std::move(epi)};
}

std::vector<TemplateCase> cases() {
  const auto* tpl = &schedules::conv2d_depthwise_mult_template();
  std::vector<TemplateCase> out;
  std::vector<Workload> shapes = {
      dw(1, 8, 9, 2, 3, 1, 1, DataType::f32(), {"bias", "relu"}),  // k = 2, one block each
      dw(1, 5, 11, 3, 3, 2, 1),                                     // k = 3, odd C, stride 2
      dw(2, 16, 7, 4, 5, 1, 2, DataType::f32(), {"residual"}),      // k = 4, 5x5, batch 2
      dw(1, 6, 10, 2, 3, 1, 2, DataType::f32(), {"bias"}, 2),       // dilation 2
  };
  add_small_shape_cases(out, shapes);
  for (const auto& [target, dtype] : half_targets())
    out.push_back({dw(1, 12, 8, 2, 3, 1, 1, dtype, {"bias", "relu6"}), target, -1});
  // MobileNet-like: 32 channels x 2 on a real-sized plane, natively.
  add_native_cases(out, {dw(1, 32, 56, 2, 3, 1, 1, DataType::f32(), {"bias", "relu"})});
  for (TemplateCase& c : out) c.tpl = tpl;
  return out;
}

class DepthwiseMultTest : public TemplateTest {};

TEST_P(DepthwiseMultTest, MatchesReference) {
  check();
}

INSTANTIATE_TEST_SUITE_P(DepthwiseMult, DepthwiseMultTest, ::testing::ValuesIn(cases()),
                         template_case_name);

TEST(DepthwiseMult, OnlyMultipliersAboveOne) {
  const auto& tpl = schedules::conv2d_depthwise_mult_template();
  const Target t = target_from_name("x86-avx2");
  Workload plain = dw(1, 8, 8, 1, 3, 1, 1);  // k = 1: conv2d.depthwise's
  Workload grouped{"conv2d",
                   {{"N", 1}, {"C", 8}, {"H", 8}, {"W", 8}, {"O", 16}, {"KH", 3}, {"KW", 3},
                    {"groups", 2}},
                   DataType::f32(),
                   {}};
  for (const Workload& w : {plain, grouped}) {
    EXPECT_FALSE(tpl.applies(w, t)) << w.str();
    EXPECT_THROW(tpl.instantiate(w, t, tpl.fallback(dw(1, 8, 8, 2, 3, 1, 1), t)), UserError)
        << w.str();
  }
  Workload w = dw(1, 8, 8, 2, 3, 1, 1);
  EXPECT_TRUE(tpl.applies(w, t));
  std::vector<std::string> names;
  for (const auto* c : schedules::templates_for(w, t)) names.push_back(c->name());
  EXPECT_NE(std::find(names.begin(), names.end(), "conv2d.depthwise_mult"), names.end());
}

// The fallback reads one input block per output block where k divides the output block.
TEST(DepthwiseMult, FallbackInputBlockIsTheOutputBlockOverK) {
  const auto& tpl = schedules::conv2d_depthwise_mult_template();
  const Target neon = target_from_name("arm-neon");
  schedules::Config c = tpl.fallback(dw(1, 32, 16, 2, 3, 1, 1), neon);
  EXPECT_EQ(c["oc_bn"], 8);
  EXPECT_EQ(c["ic_bn"], 4);
}

}  // namespace
}  // namespace kiln::testing
