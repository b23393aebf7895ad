// Pooling templates (max, average with and without pad counting, global average): fallback
// and random configs over ResNet/MobileNet shapes and awkward ones, on every target preset,
// in f32 everywhere, f16/bf16 where the target has them, and u8/i8 max pools; bad shapes and
// dtypes.
#include <gtest/gtest.h>

#include "compiler/base/error.h"
#include "schedules/pooling/pooling.h"
#include "tests/kernels/template_harness.h"

namespace kiln::testing {
namespace {

using ir::DataType;
using schedules::OpTemplate;
using schedules::Workload;

Workload pool(const std::string& op, int64_t n, int64_t c, int64_t h, int64_t w, int64_t k,
              int64_t s, int64_t p, bool ceil = false, bool include_pad = false,
              DataType t = DataType::f32()) {
  return Workload{op,
                  {{"N", n}, {"C", c}, {"H", h}, {"W", w}, {"KH", k}, {"KW", k}, {"SH", s},
                   {"SW", s}, {"PH", p}, {"PW", p}, {"ceil_mode", ceil ? 1 : 0},
                   {"count_include_pad", include_pad ? 1 : 0}},
                  t, {}};
}
Workload global(int64_t n, int64_t c, int64_t h, int64_t w, DataType t = DataType::f32()) {
  return Workload{"global_avg_pool2d", {{"N", n}, {"C", c}, {"H", h}, {"W", w}}, t, {}};
}

std::vector<TemplateCase> cases() {
  std::vector<TemplateCase> out;
  // Awkward shapes: odd sizes, ceil_mode overhang, both pad-counting modes, 1x1 spatial.
  add_small_shape_cases(
      out,
      {pool("max_pool2d", 1, 3, 13, 11, 3, 2, 1), pool("max_pool2d", 2, 2, 9, 10, 2, 2, 0, true),
       pool("avg_pool2d", 1, 3, 11, 13, 3, 2, 1, false, true),
       pool("avg_pool2d", 1, 2, 10, 9, 3, 2, 1, true, false),
       pool("avg_pool2d", 1, 2, 12, 7, 2, 1, 1, true, true),
       pool("max_pool2d", 1, 5, 1, 1, 1, 1, 0), global(2, 3, 7, 5), global(1, 4, 1, 1)});
  // Half precision where the target has it (also f16 on arm-bf16).
  auto halves = half_targets();
  halves.push_back({"arm-bf16", DataType::f16()});
  for (const auto& [t, d] : halves)
    for (int c = -1; c < 1; ++c) {
      out.push_back({pool("max_pool2d", 1, 2, 9, 12, 3, 2, 1, false, false, d), t, c});
      out.push_back({pool("avg_pool2d", 1, 2, 9, 12, 3, 2, 1, true, false, d), t, c});
      out.push_back({global(1, 3, 7, 7, d), t, c});
    }
  // 8-bit max pools (a quantized model's), natively and under qemu.
  for (const char* t : {"x86-avx2", "arm-neon"})
    for (DataType d : {DataType::u8(), DataType::i8()})
      for (int c = -1; c < 1; ++c)
        out.push_back({pool("max_pool2d", 1, 3, 13, 11, 3, 2, 1, true, false, d), t, c});
  // Real layers, natively: ResNet stem pool, ResNet/MobileNet global pools.
  add_native_cases(out, {pool("max_pool2d", 1, 64, 112, 112, 3, 2, 1), global(1, 512, 7, 7),
                         global(1, 1280, 7, 7), pool("avg_pool2d", 1, 32, 28, 28, 2, 2, 0)});
  return out;
}

class PoolingTemplateTest : public TemplateTest {};

TEST_P(PoolingTemplateTest, MatchesReference) {
  check();
}

INSTANTIATE_TEST_SUITE_P(Pooling, PoolingTemplateTest, ::testing::ValuesIn(cases()),
                         template_case_name);

TEST(PoolingTemplateErrors, BadShapesAndDtypes) {
  Target x86 = target_from_name("x86-avx512");
  const OpTemplate& mp = schedules::max_pool2d_template();
  schedules::Config cfg = mp.fallback(pool("max_pool2d", 1, 1, 8, 8, 3, 2, 1), x86);
  EXPECT_THROW(mp.instantiate(pool("max_pool2d", 0, 1, 8, 8, 3, 2, 1), x86, cfg), UserError);
  EXPECT_THROW(mp.instantiate(pool("max_pool2d", 1, 1, 8, 8, 3, 0, 1), x86, cfg), UserError);
  EXPECT_THROW(mp.instantiate(pool("max_pool2d", 1, 1, 8, 8, 3, 2, 2), x86, cfg), UserError);
  EXPECT_THROW(mp.instantiate(pool("max_pool2d", 1, 1, 2, 2, 5, 1, 1), x86, cfg), UserError);
  // Max pools take 8-bit data (a max is exact); an average would need its own rounding.
  const OpTemplate& ap = schedules::avg_pool2d_template();
  const Workload avg_i8 = pool("avg_pool2d", 1, 1, 8, 8, 3, 2, 1, false, false, DataType::i8());
  EXPECT_THROW(ap.instantiate(avg_i8, x86, ap.fallback(avg_i8, x86)), UserError);
  const OpTemplate& gp = schedules::global_avg_pool2d_template();
  EXPECT_THROW(gp.inputs(global(1, -2, 7, 7)), UserError);
  Workload missing{"global_avg_pool2d", {{"N", 1}, {"C", 2}}, DataType::f32(), {}};
  EXPECT_THROW(gp.inputs(missing), UserError);
}

}  // namespace
}  // namespace kiln::testing
