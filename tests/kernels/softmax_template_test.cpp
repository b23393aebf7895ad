// softmax, layer_norm and batch_norm templates: fallback and random configs over BERT-base
// and ResNet shapes and awkward ones, on every target preset, f32 everywhere and f16/bf16
// where the target has them; bad shapes and dtypes.
#include <gtest/gtest.h>

#include <cmath>

#include "ir/error.h"
#include "kernel_harness.h"
#include "schedules/batch_norm.h"
#include "schedules/softmax.h"
#include "template_harness.h"

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

const OpTemplate& template_for(const Workload& w) {
  if (w.op == "softmax") return schedules::softmax_template();
  if (w.op == "layer_norm") return schedules::layer_norm_template();
  return schedules::batch_norm_template();
}

// check_template, except that batch_norm's variance input is made non-negative (|v|), as
// a real variance is.
std::string check_bn(const Workload& w, const std::string& target_name, int config_seed) {
  const OpTemplate& tpl = schedules::batch_norm_template();
  codegen::Target target = codegen::target_from_name(target_name);
  schedules::Config cfg = tpl.fallback(w, target);
  if (config_seed >= 0) {
    std::mt19937_64 rng(static_cast<uint64_t>(config_seed) * 7919 + 17);
    cfg = tpl.space(w, target).random(rng);
  }
  SCOPED_TRACE(tpl.name() + " " + w.str() + " on " + target_name + " config " + cfg.to_json());
  schedules::BuiltKernel k = tpl.build(w, target, cfg, "kernel");
  std::vector<schedules::Values> logical;
  std::vector<Bytes> args;
  uint32_t seed = 11;
  for (const schedules::KernelArg& a : k.args) {
    if (a.is_output) {
      args.emplace_back(static_cast<size_t>(a.kernel_elements) * w.dtype.bytes(), 0);
      continue;
    }
    logical.push_back(random_values(a.logical.elements(), seed++, w.dtype));
    if (a.logical.name == "var")
      for (float& v : logical.back()) v = std::fabs(v);
    args.push_back(encode(logical.back(), w.dtype));
  }
  TargetRun run = run_on_target(k.func, target_name, args, {static_cast<int>(k.args.size()) - 1});
  if (!run.skip_reason.empty()) return run.skip_reason;
  schedules::Values want = tpl.reference(w, logical);
  for (float& x : want) x = round_to(x, w.dtype);
  // A variance near 0 divides by sqrt(eps): compare relative to the output's magnitude.
  EXPECT_TRUE(all_close(decode(run.outputs[0], w.dtype), want, tolerance(w.dtype)));
  return "";
}

struct Case {
  Workload w;
  std::string target;
  int config;  // -1: fallback
};

std::vector<Case> cases() {
  std::vector<Case> out;
  std::vector<Workload> small = {rows("softmax", 3, 37), rows("softmax", 5, 64),
                                 rows("softmax", 1, 1),  rows("layer_norm", 3, 37),
                                 rows("layer_norm", 4, 96), bn(2, 3, 5, 7), bn(1, 17, 1, 1)};
  // Fallback and two random configs on AVX-512, the fallback on AVX2; under qemu a
  // random config on NEON, the fallback on every other shape for fp16/bf16 (slow: qemu).
  for (size_t i = 0; i < small.size(); ++i) {
    for (int c = -1; c < 2; ++c) out.push_back({small[i], "x86-avx512", c});
    out.push_back({small[i], "x86-avx2", -1});
    out.push_back({small[i], "arm-neon", 2});
    out.push_back({small[i], i % 2 ? "arm-fp16" : "arm-bf16", -1});
  }
  for (const auto& [t, d] : std::vector<std::pair<std::string, DataType>>{
           {"x86-avx512", DataType::bf16()}, {"x86-avx512", DataType::f16()},
           {"arm-fp16", DataType::f16()}, {"arm-bf16", DataType::bf16()}})
    for (int c = -1; c < 1; ++c) {
      out.push_back({rows("softmax", 3, 45, d), t, c});
      out.push_back({rows("layer_norm", 2, 40, d), t, c});
      out.push_back({bn(1, 3, 4, 9, d), t, c});
    }
  // BERT-base attention softmax and layer norm, a ResNet batch norm, natively.
  for (const Workload& w : {rows("softmax", 128, 128), rows("layer_norm", 128, 768),
                            bn(1, 64, 56, 56)})
    for (int c = -1; c < 1; ++c) out.push_back({w, "x86-avx512", c});
  return out;
}

void PrintTo(const Case& c, std::ostream* os) {
  *os << c.w.str() << " on " << c.target << " config " << c.config;
}

class NormTemplateTest : public ::testing::TestWithParam<Case> {};

TEST_P(NormTemplateTest, MatchesReference) {
  const Case& c = GetParam();
  std::string skip = c.w.op == "batch_norm"
                         ? check_bn(c.w, c.target, c.config)
                         : check_template(template_for(c.w), c.w, c.target, c.config);
  if (!skip.empty()) GTEST_SKIP() << skip;
}

std::string name(const ::testing::TestParamInfo<Case>& info) {
  std::string n = info.param.w.op + "_" + info.param.w.dtype.str() + "_" + info.param.target +
                  "_" + (info.param.config < 0 ? "fallback" : "cfg" + std::to_string(info.param.config));
  for (char& ch : n)
    if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return n + "_" + std::to_string(info.index);
}

INSTANTIATE_TEST_SUITE_P(Norm, NormTemplateTest, ::testing::ValuesIn(cases()), name);

TEST(NormTemplateErrors, BadShapesAndDtypes) {
  codegen::Target x86 = codegen::target_from_name("x86-avx512");
  for (const OpTemplate* t : {&schedules::softmax_template(), &schedules::layer_norm_template()}) {
    schedules::Config cfg = t->fallback(rows(t->op(), 2, 8), x86);
    EXPECT_THROW(t->build(rows(t->op(), 0, 8), x86, cfg, "k"), UserError);
    EXPECT_THROW(t->build(rows(t->op(), 2, -8), x86, cfg, "k"), UserError);
    EXPECT_THROW(t->build(rows(t->op(), 2, 8, DataType::i32()), x86, cfg, "k"), UserError);
    Workload missing{t->op(), {{"M", 2}}, DataType::f32(), {}};
    EXPECT_THROW(t->inputs(missing), UserError);
  }
  Workload bad_eps = rows("layer_norm", 2, 8);
  bad_eps.params["eps_e9"] = 0;
  EXPECT_THROW(schedules::layer_norm_template().reference(bad_eps, {{}, {}, {}}), UserError);
  const OpTemplate& b = schedules::batch_norm_template();
  schedules::Config cfg = b.fallback(bn(1, 2, 3, 3), x86);
  EXPECT_THROW(b.build(bn(1, 0, 3, 3), x86, cfg, "k"), UserError);
  EXPECT_THROW(b.build(bn(1, 2, 3, 3, DataType::i8()), x86, cfg, "k"), UserError);
}

}  // namespace
}  // namespace kiln::testing
