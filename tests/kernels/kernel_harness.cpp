#include "tests/kernels/kernel_harness.h"

#include <cstdlib>

#include "compiler/target/target.h"

namespace kiln::testing {

namespace {
// Every kernel these tests lower is verified after every lowering pass, so a pass that
// breaks the IR fails by name even where the kernel would still compute the right answer.
// Templates lower inside schedules (no LowerOptions reach them), so the switch is the one
// lower() reads from the environment; set before main, and only if the caller did not.
[[maybe_unused]] const bool kVerifyEveryPass = setenv("KILN_VERIFY_IR", "1", 0) == 0;
}  // namespace

tuner::RunOptions test_run_options() {
  tuner::RunOptions o;
  o.threads = 2;
  o.aarch64_runner = KILN_AARCH64_RUNNER;
  return o;
}

TargetRun run_on_target(const ir::LoweredFunc& f, const std::string& target_name,
                        const std::vector<Bytes>& args, const std::vector<int>& output_indices) {
  tuner::KernelRunResult r = tuner::run_lowered(f, target_from_name(target_name), args,
                                                output_indices, test_run_options());
  return {r.skip_reason, std::move(r.outputs)};
}

::testing::AssertionResult all_close(const std::vector<float>& got, const std::vector<float>& want,
                                     double rtol) {
  tuner::Comparison c = tuner::compare(got, want, rtol);
  if (c.close) return ::testing::AssertionSuccess();
  auto f = ::testing::AssertionFailure() << c.message();
  if (c.first < got.size() && c.first < want.size())
    f << ": got " << got[c.first] << ", want " << want[c.first];
  return f;
}

}  // namespace kiln::testing
