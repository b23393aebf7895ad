// dense.packed: fallback and random configs, over a table of shapes (BERT-base and ResNet
// layer shapes, GEMV, awkward primes) and epilogues, on every target and dtype it claims.
#include <gtest/gtest.h>

#include "compiler/base/error.h"
#include "schedules/dense/dense.h"
#include "tests/kernels/template_harness.h"

namespace kiln::testing {
namespace {

using ir::DataType;
using schedules::OpTemplate;
using schedules::Workload;

Workload dense(int64_t m, int64_t n, int64_t k, DataType t = DataType::f32(),
               std::vector<std::string> epilogue = {}) {
  return Workload{"dense", {{"M", m}, {"N", n}, {"K", k}}, t, std::move(epilogue)};
}

std::vector<TemplateCase> cases() {
  // dense.packed itself, also where the registry prefers a low-precision template.
  const OpTemplate* packed = &schedules::dense_packed_template();
  std::vector<TemplateCase> out;
  // Small and awkward shapes: every target, fallback + random configs.
  std::vector<Workload> small = {
      dense(37, 53, 29),
      dense(1, 100, 64),
      dense(13, 17, 7, DataType::f32(), {"bias", "relu"}),
      dense(2, 64, 30, DataType::f32(), {"bias", "residual", "relu6"}),
      dense(3, 5, 1),
      dense(5, 24, 19, DataType::f32(), {"bias", "silu", "residual", "hard_swish"}),
      dense(7, 20, 11, DataType::f32(), {"bias", "mish"})};
  for (const std::string t : {"x86-avx2", "x86-avx512", "arm-neon", "arm-fp16", "arm-bf16"})
    for (const Workload& w : small)
      for (int c = -1; c < 3; ++c) out.push_back({w, t, c, packed});
  // Half precision where the target has it.
  for (const auto& [t, d] : half_targets())
    for (int c = -1; c < 2; ++c) out.push_back({dense(19, 40, 33, d, {"bias"}), t, c, packed});
  // Real layer shapes, natively: ResNet-18 fc, BERT-base projections.
  for (const Workload& w : {dense(1, 1000, 512), dense(128, 768, 768, DataType::f32(), {"bias"}),
                            dense(16, 3072, 768, DataType::f32(), {"bias", "relu"})})
    for (int c = -1; c < 1; ++c) out.push_back({w, "x86-avx512", c, packed});
  return out;
}

class DenseTemplateTest : public TemplateTest {};

TEST_P(DenseTemplateTest, MatchesReference) {
  check();
}

INSTANTIATE_TEST_SUITE_P(Dense, DenseTemplateTest, ::testing::ValuesIn(cases()),
                         template_case_name);

TEST(DenseTemplateErrors, BadShapesAndDtypes) {
  const auto& t = schedules::dense_packed_template();
  Target x86 = target_from_name("x86-avx512");
  EXPECT_THROW(t.instantiate(dense(0, 4, 4), x86, t.fallback(dense(1, 4, 4), x86)), UserError);
  EXPECT_THROW(t.instantiate(dense(-3, 4, 4), x86, t.fallback(dense(1, 4, 4), x86)), UserError);
  Workload i8 = dense(4, 4, 4, DataType::i8());
  EXPECT_THROW(t.instantiate(i8, x86, t.fallback(i8, x86)), UserError);
  Workload bad_epi = dense(4, 4, 4, DataType::f32(), {"softplus"});
  EXPECT_THROW(t.instantiate(bad_epi, x86, t.fallback(bad_epi, x86)), UserError);
  schedules::Config cfg = t.fallback(dense(8, 8, 8), x86);
  cfg.set("mr", 5);  // not one of the knob's choices
  EXPECT_THROW(t.instantiate(dense(8, 8, 8), x86, cfg), UserError);
  Workload missing{"dense", {{"M", 4}, {"N", 4}}, DataType::f32(), {}};
  EXPECT_THROW(t.inputs(missing), UserError);
}

}  // namespace
}  // namespace kiln::testing
