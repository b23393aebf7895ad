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

  std::vector<schedules::Values> logical;
  std::vector<Bytes> args;
  uint32_t seed = 11;
  for (const schedules::KernelArg& a : k.args) {
    if (a.is_output) {
      args.emplace_back(static_cast<size_t>(a.kernel_elements) * w.dtype.bytes(), 0);
      continue;
    }
    logical.push_back(random_values(a.logical.elements(), seed++, w.dtype));
    schedules::Values packed = a.pack ? a.pack(logical.back()) : logical.back();
    EXPECT_EQ(static_cast<int64_t>(packed.size()), a.kernel_elements) << a.logical.name;
    args.push_back(encode(packed, w.dtype));
  }
  int out_index = static_cast<int>(k.args.size()) - 1;
  TargetRun run = run_on_target(k.func, target_name, args, {out_index});
  if (!run.skip_reason.empty()) return run.skip_reason;

  schedules::Values got = decode(run.outputs[0], w.dtype);
  if (k.args.back().unpack) got = k.args.back().unpack(got);
  schedules::Values want = tpl.reference(w, logical);
  for (float& x : want) x = round_to(x, w.dtype);
  EXPECT_TRUE(all_close(got, want, tolerance(w.dtype)));
  return "";
}

}  // namespace kiln::testing
