// layout.nchw_to_nchwc and layout.nchwc_to_nchw: every config of their (small) spaces on
// every target, blocks that divide C and blocks that pad it, f32 and the half types; plus
// the user errors.
#include <gtest/gtest.h>

#include <array>

#include "compiler/base/error.h"
#include "schedules/layout.h"
#include "tests/kernels/template_harness.h"

namespace kiln::testing {
namespace {

using ir::DataType;
using schedules::OpTemplate;
using schedules::Workload;

Workload layout(int64_t n, int64_t c, int64_t h, int64_t w, int64_t block, int64_t dir,
                DataType t = DataType::f32()) {
  return Workload{"layout_transform",
                  {{"N", n}, {"C", c}, {"H", h}, {"W", w}, {"block", block}, {"direction", dir}},
                  t,
                  {}};
}

std::vector<TemplateCase> cases() {
  std::vector<TemplateCase> out;
  for (int dir : {0, 1}) {
    const OpTemplate* tpl = dir == 0 ? &schedules::layout_nchw_to_nchwc_template()
                                     : &schedules::layout_nchwc_to_nchw_template();
    std::vector<Workload> shapes = {layout(1, 7, 5, 6, 4, dir), layout(2, 32, 3, 9, 16, dir),
                                    layout(1, 3, 4, 4, 3, dir), layout(1, 13, 2, 17, 8, dir)};
    for (const std::string t : {"x86-avx2", "x86-avx512"})
      for (const Workload& w : shapes)
        for (int c = -1; c < 3; ++c) out.push_back({w, t, c, tpl});
    for (const std::string t : {"arm-neon", "arm-fp16", "arm-bf16"})
      out.push_back({shapes[t == std::string("arm-neon") ? 1 : 0], t, -1, tpl});
    out.push_back({layout(1, 64, 56, 56, 16, dir), "x86-avx512", -1, tpl});  // ResNet size
    out.push_back({layout(1, 13, 5, 6, 8, dir, DataType::bf16()), "x86-avx512", 0, tpl});
    out.push_back({layout(1, 13, 5, 6, 8, dir, DataType::f16()), "arm-fp16", -1, tpl});
  }
  // Re-blocking NCHW[a]c -> NCHW[b]c: wider, narrower, non-multiple and padded blocks.
  const OpTemplate* reblock = &schedules::layout_nchwc_to_nchwc_template();
  for (auto [from, to, c] : std::vector<std::array<int64_t, 3>>{
           {16, 32, 64}, {32, 16, 64}, {8, 12, 13}, {3, 16, 3}, {64, 16, 24}}) {
    Workload w = layout(1, c, 5, 7, to, 2);
    w.params["src_block"] = from;
    for (const std::string t : {"x86-avx512", "arm-neon"})
      for (int cfg = -1; cfg < 2; ++cfg) out.push_back({w, t, cfg, reblock});
  }
  return out;
}

class LayoutTemplateTest : public TemplateTest {};

TEST_P(LayoutTemplateTest, MatchesReference) {
  check();
}

INSTANTIATE_TEST_SUITE_P(Layout, LayoutTemplateTest, ::testing::ValuesIn(cases()),
                         template_case_name);

TEST(LayoutTemplateErrors, BadShapes) {
  const auto& t = schedules::layout_nchw_to_nchwc_template();
  Target x86 = target_from_name("x86-avx512");
  schedules::Config cfg = t.fallback(layout(1, 8, 4, 4, 4, 0), x86);
  EXPECT_THROW(t.instantiate(layout(1, 0, 4, 4, 4, 0), x86, cfg), UserError);
  EXPECT_THROW(t.instantiate(layout(1, 8, -4, 4, 4, 0), x86, cfg), UserError);
  EXPECT_THROW(t.instantiate(layout(1, 8, 4, 4, 0, 0), x86, cfg), UserError);
  EXPECT_THROW(t.instantiate(layout(1, 8, 4, 4, 4, 2), x86, cfg), UserError);
  EXPECT_THROW(t.instantiate(layout(1, 8, 4, 4, 4, 0, DataType::i32()), x86, cfg), UserError);
  // 8-bit data (quantized activations between int8 convs) is moved like any other.
  EXPECT_NO_THROW(t.instantiate(layout(1, 8, 4, 4, 4, 0, DataType::u8()), x86, cfg));
  EXPECT_FALSE(t.applies(layout(1, 8, 4, 4, 4, 1), x86));
  EXPECT_TRUE(schedules::layout_nchwc_to_nchw_template().applies(layout(1, 8, 4, 4, 4, 1), x86));
  const auto& reblock = schedules::layout_nchwc_to_nchwc_template();
  Workload w = layout(1, 8, 4, 4, 4, 2);
  EXPECT_THROW(reblock.fallback(w, x86), UserError);  // no src_block
  w.params["src_block"] = 0;
  EXPECT_THROW(reblock.fallback(w, x86), UserError);
  w.params["src_block"] = 8;
  EXPECT_TRUE(reblock.applies(w, x86));
  EXPECT_FALSE(reblock.applies(layout(1, 8, 4, 4, 4, 1), x86));
}

}  // namespace
}  // namespace kiln::testing
