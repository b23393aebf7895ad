// softmax, layer_norm and batch_norm templates: fallback and random configs over BERT-base
// and ResNet shapes and awkward ones, on every target preset, f32 everywhere and f16/bf16
// where the target has them; bad shapes and dtypes.
#include <gtest/gtest.h>

#include <cmath>

#include "compiler/base/error.h"
#include "tests/kernels/kernel_harness.h"
#include "schedules/elementwise/batch_norm.h"
#include "schedules/reduce/softmax.h"
#include "tests/kernels/template_harness.h"

namespace kiln::testing {
namespace {

using ir::DataType;
using schedules::OpTemplate;
using schedules::Workload;

Workload rows(const std::string& op, int64_t m, int64_t n, DataType t = DataType::f32()) {
  return Workload{op, {{"M", m}, {"N", n}}, t, {}};
}
Workload bn(int64_t n, int64_t c, int64_t h, int64_t w, DataType t = DataType::f32()) {
  return Workload{"batch_norm", {{"N", n}, {"C", c}, {"H", h}, {"W", w}}, t, {}};
}

// batch_norm's variance input is made non-negative (|v|), as a real variance is. A variance
// near 0 divides by sqrt(eps): the comparison is relative to the output's magnitude.
std::string check_bn(const Workload& w, const std::string& target, int config_seed) {
  const OpTemplate& tpl = schedules::batch_norm_template();
  InputCheck check{11, nullptr, w.dtype, tolerance(w.dtype)};
  check.adjust = [](const schedules::KernelArg& a, schedules::Values& v) {
    if (a.logical.name == "var")
      for (float& x : v) x = std::fabs(x);
  };
  schedules::Config cfg = template_config(tpl, w, target_from_name(target), config_seed);
  return check_template_inputs(tpl, w, target, cfg, check);
}

std::vector<TemplateCase> cases() {
  std::vector<TemplateCase> out;
  add_small_shape_cases(
      out, {rows("softmax", 3, 37), rows("softmax", 5, 64), rows("softmax", 1, 1),
            rows("layer_norm", 3, 37), rows("layer_norm", 4, 96), bn(2, 3, 5, 7), bn(1, 17, 1, 1)});
  for (const auto& [t, d] : half_targets())
    for (int c = -1; c < 1; ++c) {
      out.push_back({rows("softmax", 3, 45, d), t, c});
      out.push_back({rows("layer_norm", 2, 40, d), t, c});
      out.push_back({bn(1, 3, 4, 9, d), t, c});
    }
  // BERT-base attention softmax and layer norm, a ResNet batch norm, natively.
  add_native_cases(out,
                   {rows("softmax", 128, 128), rows("layer_norm", 128, 768), bn(1, 64, 56, 56)});
  return out;
}

class NormTemplateTest : public TemplateTest {};

TEST_P(NormTemplateTest, MatchesReference) {
  const TemplateCase& c = GetParam();
  if (c.w.op != "batch_norm") {
    check();
    return;
  }
  std::string skip = check_bn(c.w, c.target, c.config);
  if (!skip.empty()) GTEST_SKIP() << skip;
}

INSTANTIATE_TEST_SUITE_P(Norm, NormTemplateTest, ::testing::ValuesIn(cases()), template_case_name);

TEST(NormTemplateErrors, BadShapesAndDtypes) {
  Target x86 = target_from_name("x86-avx512");
  for (const OpTemplate* t : {&schedules::softmax_template(), &schedules::layer_norm_template()}) {
    schedules::Config cfg = t->fallback(rows(t->op(), 2, 8), x86);
    EXPECT_THROW(t->instantiate(rows(t->op(), 0, 8), x86, cfg), UserError);
    EXPECT_THROW(t->instantiate(rows(t->op(), 2, -8), x86, cfg), UserError);
    EXPECT_THROW(t->instantiate(rows(t->op(), 2, 8, DataType::i32()), x86, cfg), UserError);
    Workload missing{t->op(), {{"M", 2}}, DataType::f32(), {}};
    EXPECT_THROW(t->inputs(missing), UserError);
  }
  Workload bad_eps = rows("layer_norm", 2, 8);
  bad_eps.params["eps"] = 0.0;
  EXPECT_THROW(schedules::layer_norm_template().reference(bad_eps, {{}, {}, {}}), UserError);
  const OpTemplate& b = schedules::batch_norm_template();
  schedules::Config cfg = b.fallback(bn(1, 2, 3, 3), x86);
  EXPECT_THROW(b.instantiate(bn(1, 0, 3, 3), x86, cfg), UserError);
  EXPECT_THROW(b.instantiate(bn(1, 2, 3, 3, DataType::i8()), x86, cfg), UserError);
}

}  // namespace
}  // namespace kiln::testing
