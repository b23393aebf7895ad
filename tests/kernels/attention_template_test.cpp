// attention: fallback and random configs over ViT-B/16 (12 heads, 197 tokens, head size 64)
// and awkward shapes (one query, one key, rows that are not whole vectors, V wider than Q),
// on every target preset; bad shapes, dtypes and rows longer than a block buffer.
#include <gtest/gtest.h>

#include "compiler/base/error.h"
#include "schedules/attention/attention.h"
#include "tests/kernels/template_harness.h"

namespace kiln::testing {
namespace {

using ir::DataType;
using schedules::Workload;

Workload attention(int64_t b, int64_t m, int64_t n, int64_t d, int64_t e,
                   DataType t = DataType::f32()) {
  return Workload{"attention", {{"B", b}, {"M", m}, {"N", n}, {"D", d}, {"E", e}}, t, {}};
}

// With a mask of [batches, rows, N] read by batch b at (b / every) % batches.
Workload masked(Workload w, int64_t batches, int64_t every, int64_t rows) {
  w.params["mask"] = 1, w.params["mask_batches"] = batches, w.params["mask_every"] = every;
  w.params["mask_rows"] = rows;
  return w;
}

std::vector<TemplateCase> cases() {
  std::vector<TemplateCase> out;
  add_small_shape_cases(
      out, {attention(2, 13, 37, 5, 7), attention(1, 1, 1, 1, 1), attention(3, 7, 5, 3, 20),
            attention(1, 9, 70, 16, 33), attention(2, 3, 1200, 4, 8),
            // BERT's padding mask: 2 sequences x 3 heads, one mask row each.
            masked(attention(6, 5, 19, 4, 8), 2, 3, 1),
            // A per-head bias of every row, repeated over 2 sequences.
            masked(attention(6, 7, 11, 3, 5), 3, 1, 7),
            // One causal mask for all.
            masked(attention(4, 9, 9, 8, 8), 1, 4, 9)});
  // ViT-B/16's attention, natively.
  add_native_cases(out, {attention(12, 197, 197, 64, 64)});
  return out;
}

class AttentionTemplateTest : public TemplateTest {};

TEST_P(AttentionTemplateTest, MatchesReference) {
  check();
}

INSTANTIATE_TEST_SUITE_P(Attention, AttentionTemplateTest, ::testing::ValuesIn(cases()),
                         template_case_name);

TEST(AttentionTemplateErrors, BadShapesDtypesAndConfigs) {
  const auto& t = schedules::attention_template();
  Target x86 = target_from_name("x86-avx512");
  schedules::Config cfg = t.fallback(attention(1, 8, 8, 4, 4), x86);
  EXPECT_THROW(t.instantiate(attention(0, 8, 8, 4, 4), x86, cfg), UserError);
  EXPECT_THROW(t.instantiate(attention(1, 8, -8, 4, 4), x86, cfg), UserError);
  EXPECT_THROW(t.instantiate(attention(1, 8, 8, 4, 4, DataType::bf16()), x86, cfg), UserError);
  Workload missing{"attention", {{"B", 1}, {"M", 2}, {"N", 2}, {"D", 2}}, DataType::f32(), {}};
  EXPECT_THROW(t.inputs(missing), UserError);
  // mr rows of scores must fit a block buffer: 8 rows of 4096 keys do not.
  cfg.set("mr", 8);
  EXPECT_THROW(t.instantiate(attention(1, 8, 4096, 4, 4), x86, cfg), UserError);
  EXPECT_FALSE(t.applies(attention(1, 2, schedules::kAttentionMaxKeys + 1, 4, 4), x86));
  // Masks whose batches overrun B, or whose rows are neither 1 nor M.
  EXPECT_THROW(t.inputs(masked(attention(6, 5, 8, 4, 4), 4, 2, 1)), UserError);
  EXPECT_THROW(t.inputs(masked(attention(6, 5, 8, 4, 4), 2, 3, 3)), UserError);
  Workload two = attention(1, 2, 2, 2, 2);
  two.params["mask"] = 2;
  EXPECT_THROW(t.inputs(two), UserError);
  EXPECT_TRUE(t.applies(attention(1, 2, schedules::kAttentionMaxKeys, 4, 4), x86));
}

}  // namespace
}  // namespace kiln::testing
