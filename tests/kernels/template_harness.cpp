#include "template_harness.h"

#include <gtest/gtest.h>

#include "codegen/target.h"
#include "kernel_harness.h"

namespace kiln::testing {

std::string check_template(const schedules::OpTemplate& tpl, const schedules::Workload& w,
                           const std::string& target_name, int config_seed) {
  codegen::Target target = codegen::target_from_name(target_name);
  schedules::Config cfg;
  if (config_seed < 0) {
    cfg = tpl.fallback(w, target);
  } else {
    std::mt19937_64 rng(static_cast<uint64_t>(config_seed) * 7919 + 17);
    cfg = tpl.space(w, target).random(rng);
  }
  SCOPED_TRACE(tpl.name() + " " + w.str() + " on " + target_name + " config " + cfg.to_json());
  schedules::BuiltKernel k = tpl.build(w, target, cfg, "kernel");
  tuner::CheckResult r = tuner::check_built_kernel(tpl, w, target, k, test_run_options());
  if (!r.skip_reason.empty()) return r.skip_reason;
  EXPECT_TRUE(r.comparison.close) << r.comparison.message();
  return "";
}

}  // namespace kiln::testing
