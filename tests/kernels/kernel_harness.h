// Runs lowered kernels on every target preset and compares them with a reference.
//
// A kernel is compiled for the target, linked into a shared object and run: natively for
// x86 presets this CPU supports (through the runtime, with a 2-thread pool, so parallel
// loops really run in parallel), under qemu-aarch64 for ARM presets (through the
// cross-built kernel runner). Presets that cannot run here are skipped with a reason.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "ir/lowered_func.h"

namespace kiln::testing {

using Bytes = std::vector<uint8_t>;

struct TargetRun {
  std::string skip_reason;  // non-empty when the target cannot run here
  std::vector<Bytes> outputs;
};

TargetRun run_on_target(const ir::LoweredFunc& f, const std::string& target,
                        const std::vector<Bytes>& args, const std::vector<int>& output_indices);

// Uniform values in [-1, 1], rounded to `t` (so the reference sees what the kernel sees).
std::vector<float> random_values(size_t n, uint32_t seed, ir::DataType t);
Bytes encode(const std::vector<float>& v, ir::DataType t);
std::vector<float> decode(const Bytes& b, ir::DataType t);
float round_to(float v, ir::DataType t);

// Relative tolerance by element type: f32 1e-4, f16 1e-2, bf16 2e-2.
double tolerance(ir::DataType t);
::testing::AssertionResult all_close(const std::vector<float>& got, const std::vector<float>& want,
                                     double rtol);

}  // namespace kiln::testing
