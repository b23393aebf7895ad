// Assembly checks for the low-precision dense templates (as Halide's simd_op_check): the bf16
// paths really use `vdpbf16ps zmm` (x86) and `bfmmla`, or by knob `bfdot` (AArch64); f16
// accumulation uses `fmla .8h` (by default in K blocks added into f32), `f16_acc` 0 `fmla .4s`.
// Codegen only: nothing runs, so these hold on any host.
#include <gtest/gtest.h>

#include <sstream>

#include "compiler/codegen/codegen.h"
#include "schedules/dense/lowp.h"
#include "tests/kernels/asm_check.h"
#include "tests/native_targets.h"
#include "tuner/builder.h"

namespace kiln::testing {
namespace {

using ir::DataType;
using schedules::Workload;



Workload dense(int64_t m, int64_t n, int64_t k, DataType t) {
  return Workload{"dense", {{"M", m}, {"N", n}, {"K", k}}, t, {}};
}

TEST(LowpAsm, X86Bf16UsesVdpbf16psOnZmm) {
  std::string s = template_assembly(schedules::dense_bf16_x86_template(),
                                    dense(64, 128, 64, DataType::bf16()), test::kX86Bf16);
  // The fallback tile: 6 rows x 4 zmm, K unrolled by 2 -> 48 in the loop body.
  EXPECT_GE(count_instructions(s, "vdpbf16ps", "zmm"), 48) << s;
  // A's pair of bf16 broadcast as one 32-bit value (LLVM picks either spelling).
  EXPECT_GE(count_instructions(s, "vbroadcastss", "zmm") + count_instructions(s, "vpbroadcastd", "zmm"), 1) << s;
  EXPECT_EQ(count_instructions(s, "vdpbf16ps", "rsp"), 0) << "accumulators spilled to the stack:\n" << s;
}

TEST(LowpAsm, ArmBf16UsesBfmmla) {
  std::string s = template_assembly(schedules::dense_bf16_arm_template(),
                           dense(32, 32, 64, DataType::bf16()), "arm-bf16");
  EXPECT_GE(count_instructions(s, "bfmmla", "v"), 16) << s;  // 4 x 4 tiles of 2x2 per K block
}

TEST(LowpAsm, ArmBf16BfdotKnobUsesBfdot) {
  std::string s = template_assembly(schedules::dense_bf16_arm_template(),
                           dense(32, 32, 64, DataType::bf16()), "arm-bf16", {{"bfdot", 1}});
  EXPECT_GE(count_instructions(s, "bfdot", "v"), 16) << s;  // 8 rows x 4 vectors of 4 columns
  EXPECT_EQ(count_instructions(s, "bfmmla", "v"), 0) << s;
}

TEST(LowpAsm, ArmF16AccumulationUsesFmla8h) {
  std::string s = template_assembly(schedules::dense_f16_arm_template(), dense(24, 32, 64, DataType::f16()),
                           "arm-fp16", {{"f16_acc", 1}});
  EXPECT_GE(count_instructions(s, "fmla", ".8h"), 8) << s;
}

// The default: `fmla .8h` within each K block (4 rows x 2 vectors per K step), the block's
// sums widened (fcvtl/fcvtl2) and added into f32 partial sums (fadd .4s) after it.
TEST(LowpAsm, ArmF16DefaultUsesFmla8hWithF32PartialSums) {
  std::string s =
      template_assembly(schedules::dense_f16_arm_template(), dense(24, 32, 256, DataType::f16()), "arm-fp16");
  EXPECT_GE(count_instructions(s, "fmla", ".8h"), 8) << s;
  EXPECT_EQ(count_instructions(s, "fmla", ".4s"), 0) << s;
  EXPECT_GE(count_instructions(s, "fcvtl", ".4s") + count_instructions(s, "fcvtl2", ".4s"), 8) << s;
  EXPECT_GE(count_instructions(s, "fadd", ".4s"), 16) << s;
}

TEST(LowpAsm, ArmF16F32AccumulationKnobUsesFmla4s) {
  std::string s = template_assembly(schedules::dense_f16_arm_template(),
                                    dense(24, 32, 64, DataType::f16()), "arm-fp16", {{"f16_acc", 0}});
  EXPECT_GE(count_instructions(s, "fmla", ".4s"), 8) << s;
  EXPECT_EQ(count_instructions(s, "fmla", ".8h"), 0) << s;
}

}  // namespace
}  // namespace kiln::testing
