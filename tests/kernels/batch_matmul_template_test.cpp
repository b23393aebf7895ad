// batch_matmul: fallback and random configs over BERT-base attention shapes (12 heads,
// 128 tokens, head size 64: Q·K^T and P·V) and awkward ones, every transpose combination,
// on every target preset, f32 everywhere and f16/bf16 where the target has them.
#include <gtest/gtest.h>

#include "compiler/base/error.h"
#include "schedules/dense/batch_matmul.h"
#include "tests/kernels/template_harness.h"

namespace kiln::testing {
namespace {

using ir::DataType;
using schedules::Workload;

Workload bmm(int64_t b, int64_t m, int64_t n, int64_t k, bool ta = false, bool tb = false,
             DataType t = DataType::f32()) {
  return Workload{"batch_matmul",
                  {{"B", b}, {"M", m}, {"N", n}, {"K", k}, {"transpose_a", ta ? 1 : 0}, {"transpose_b", tb ? 1 : 0}},
                  t, {}};
}

std::vector<TemplateCase> cases() {
  std::vector<TemplateCase> out;
  add_small_shape_cases(
      out, {bmm(3, 7, 19, 5), bmm(2, 9, 21, 17, false, true), bmm(2, 5, 16, 11, true, false),
            bmm(1, 13, 7, 3, true, true), bmm(4, 1, 1, 1)});
  for (const auto& [t, d] : half_targets())
    for (int c = -1; c < 1; ++c) out.push_back({bmm(2, 6, 20, 24, false, true, d), t, c});
  // BERT-base attention: scores = Q·K^T, context = P·V; natively.
  add_native_cases(out, {bmm(12, 128, 128, 64, false, true), bmm(12, 128, 64, 128)});
  return out;
}

class BatchMatmulTemplateTest : public TemplateTest {};

TEST_P(BatchMatmulTemplateTest, MatchesReference) {
  check();
}

INSTANTIATE_TEST_SUITE_P(BatchMatmul, BatchMatmulTemplateTest, ::testing::ValuesIn(cases()),
                         template_case_name);

TEST(BatchMatmulTemplateErrors, BadShapesAndDtypes) {
  const auto& t = schedules::batch_matmul_template();
  Target x86 = target_from_name("x86-avx512");
  schedules::Config cfg = t.fallback(bmm(1, 4, 4, 4), x86);
  EXPECT_THROW(t.instantiate(bmm(0, 4, 4, 4), x86, cfg), UserError);
  EXPECT_THROW(t.instantiate(bmm(1, 4, -4, 4), x86, cfg), UserError);
  EXPECT_THROW(t.instantiate(bmm(1, 4, 4, 4, false, false, DataType::i8()), x86, cfg), UserError);
  Workload two = bmm(1, 4, 4, 4);
  two.params["transpose_b"] = 2;
  EXPECT_THROW(t.inputs(two), UserError);
  cfg.set("mr", 5);
  EXPECT_THROW(t.instantiate(bmm(1, 8, 8, 8), x86, cfg), UserError);
}

}  // namespace
}  // namespace kiln::testing
