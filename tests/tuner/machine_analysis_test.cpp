// `kiln inspect --analyze` underneath (tuner::analyze_kernel, compiler/codegen/
// machine_code_analysis.h), on kernels whose bottleneck is known by construction: a dense
// register tile that fills the FMA pipes, one too large for the registers (spills), and one
// accumulator carried through the whole reduction (a dependency chain). llvm-mca comes with
// Debian's llvm-19, which kiln's LLVM already needs.
#include <gtest/gtest.h>
#include <stdlib.h>

#include "compiler/base/error.h"
#include "schedules/dense/dense.h"
#include "tuner/builder.h"

namespace kiln::tuner {
namespace {

using schedules::Config;
using schedules::Workload;

Workload dense(int64_t m, int64_t n, int64_t k) {
  return {"dense", {{"M", m}, {"N", n}, {"K", k}}, ir::DataType::f32(), {}};
}

// The analysis of the dense template on `target` with the fallback config, `knobs` set over it.
codegen::MachineCodeAnalysis analyze_dense(
    const std::string& target, const std::vector<std::pair<std::string, int64_t>>& knobs) {
  const schedules::OpTemplate& t = schedules::dense_packed_template();
  const Target tgt = target_from_name(target);
  Workload w = dense(64, 64, 64);
  Config cfg = t.fallback(w, tgt);
  for (const auto& [k, v] : knobs) cfg.set(k, v);
  return analyze_kernel(lower_template(t, w, tgt, cfg, "dense").func, tgt);
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

TEST(MachineAnalysis, TheCoresPeakIsItsModelsFmaThroughput) {
  // Cortex-A72's model issues one 128-bit FMLA per cycle; Zen 3's two 256-bit FMAs.
  EXPECT_NEAR(
      codegen::peak_macs_per_cycle("fmla\tv0.4s, v1.4s, v2.s[0]", target_from_name("cortex-a72")),
      4.0, 0.2);
  EXPECT_NEAR(
      codegen::peak_macs_per_cycle("vfmadd231ps\t(%rax), %ymm1, %ymm2", target_from_name("znver3")),
      16.0, 0.5);
  EXPECT_EQ(
      codegen::peak_macs_per_cycle("fadd\tv0.4s, v1.4s, v2.4s", target_from_name("cortex-a72")), 0);
}

TEST(MachineAnalysis, AFullRegisterTileIsComputeBound) {
  for (const char* target : {"cortex-a72", "neoverse-n1", "znver3"}) {
    codegen::MachineCodeAnalysis a =
        analyze_dense(target, {{"mr", 4}, {"nr_vecs", 3}, {"k_unroll", 1}});
    ASSERT_FALSE(a.loops.empty()) << target;
    const codegen::LoopPrediction& p = a.loops[0];
    EXPECT_EQ(p.loop.mac.type, "f32") << target;
    // LLVM may unroll the reduction loop once more (it does on x86).
    EXPECT_EQ(p.loop.mac_instructions % 12, 0) << target;
    EXPECT_EQ(p.loop.spill_loads + p.loop.spill_stores, 0) << target;
    EXPECT_GT(p.of_peak(), 0.8) << target << ": " << p.bottleneck;
    EXPECT_LE(p.of_peak(), 1.02) << target;
    EXPECT_TRUE(contains(p.bottleneck, "compute: ")) << target << ": " << p.bottleneck;
  }
}

TEST(MachineAnalysis, ATileTooLargeForTheRegistersSpills) {
  // 12 rows x 4 vectors = 48 accumulators; AArch64 has 32 vector registers.
  codegen::MachineCodeAnalysis a = analyze_dense("cortex-a72", {{"mr", 12}, {"nr_vecs", 4}});
  ASSERT_FALSE(a.loops.empty());
  const codegen::LoopPrediction& p = a.loops[0];
  EXPECT_EQ(p.loop.mac_instructions, 48);
  EXPECT_GT(p.loop.spill_loads, 0);
  EXPECT_GT(p.loop.spill_stores, 0);
  EXPECT_TRUE(contains(p.bottleneck, "register spills")) << p.bottleneck;
  EXPECT_LT(p.of_peak(), 0.8);
}

TEST(MachineAnalysis, OneAccumulatorIsLatencyBound) {
  // One row, one vector, no unrolling: each FMLA waits for the one before it.
  codegen::MachineCodeAnalysis a =
      analyze_dense("cortex-a72", {{"mr", 1}, {"nr_vecs", 1}, {"k_unroll", 1}});
  ASSERT_FALSE(a.loops.empty());
  const codegen::LoopPrediction& p = a.loops[0];
  EXPECT_EQ(p.loop.spill_loads + p.loop.spill_stores, 0);
  EXPECT_GT(p.cycles, 2 * p.resource_bound);
  EXPECT_TRUE(contains(p.bottleneck, "dependency chains")) << p.bottleneck;
  EXPECT_LT(p.of_peak(), 0.5);
}

TEST(MachineAnalysis, AMissingAnalyserIsNamed) {
  const char* old = getenv("KILN_LLVM_MCA");
  setenv("KILN_LLVM_MCA", "/nonexistent/llvm-mca", 1);
  std::string message;
  try {
    analyze_dense("cortex-a72", {});
  } catch (const UserError& e) {
    message = e.what();
  }
  if (old)
    setenv("KILN_LLVM_MCA", old, 1);
  else
    unsetenv("KILN_LLVM_MCA");
  EXPECT_TRUE(contains(message, "llvm-mca")) << message;
  EXPECT_TRUE(contains(message, "KILN_LLVM_MCA")) << message;
}

}  // namespace
}  // namespace kiln::tuner
