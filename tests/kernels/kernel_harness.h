// Runs lowered kernels on every target preset and compares them with a reference: a thin
// test-side layer over tuner/check_kernel.h and tuner/host_values.h.
//
// x86 presets this CPU supports run natively (with a 2-thread pool, so parallel loops really
// run in parallel); ARM presets run under qemu-aarch64 through the cross-built kernel
// runner. Presets that cannot run here are skipped with a reason.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "compiler/ir/lowered_func.h"
#include "tuner/host_values.h"
#include "tuner/check_kernel.h"

namespace kiln::testing {

using tuner::Bytes;
using tuner::decode;
using tuner::encode;
using tuner::random_values;
using tuner::round_to;
using tuner::tolerance;

struct TargetRun {
  std::string skip_reason;  // non-empty when the target cannot run here
  std::vector<Bytes> outputs;
};

// The options every kernel test runs with (2 threads, the built AArch64 runner).
tuner::RunOptions test_run_options();

TargetRun run_on_target(const ir::LoweredFunc& f, const std::string& target,
                        const std::vector<Bytes>& args, const std::vector<int>& output_indices);

::testing::AssertionResult all_close(const std::vector<float>& got, const std::vector<float>& want,
                                     double rtol);

}  // namespace kiln::testing
