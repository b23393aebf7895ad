// Assembly checks for conv2d.winograd (as Halide's simd_op_check): the batched GEMM of its
// fallback config is a register tile of vector FMAs with a broadcast input on AVX-512 (zmm),
// AVX2 (ymm) and NEON (fmla .4s), with no accumulator spilled to the stack. Codegen only:
// nothing runs, so these hold on any host.
#include <gtest/gtest.h>

#include <sstream>

#include "tests/kernels/asm_check.h"
#include "compiler/codegen/codegen.h"
#include "schedules/conv2d/winograd.h"
#include "tuner/builder.h"

namespace kiln::testing {
namespace {



const schedules::Workload kLayer{"conv2d",
                                 {{"N", 1}, {"C", 64}, {"H", 28}, {"W", 28}, {"O", 64},
                                  {"KH", 3}, {"KW", 3}, {"stride", 1}, {"pad", 1}},
                                 ir::DataType::f32(),
                                 {}};

// Broadcasts of a transformed input value from memory (not a transform's constant, which
// LLVM loads %rip-relative): the GEMM's A operand.
int input_broadcasts(const std::string& s, const std::string& reg) {
  return count_instructions(s, "vbroadcastss", reg) - count_instructions(s, "vbroadcastss", "rip");
}

TEST(WinogradAsm, X86Avx512GemmIsZmmFma) {
  std::string s = template_assembly(schedules::conv2d_winograd_template(), kLayer, "x86-avx512");
  // The fallback tile: 6 tiles x 4 zmm of output channels, one FMA each per input channel:
  // 6 broadcasts and 24 FMAs in the loop body (the transforms add more FMAs, no broadcasts).
  EXPECT_GE(input_broadcasts(s, "zmm"), 6) << s;
  EXPECT_GE(count_instructions(s, "vfmadd", "zmm"), 24) << s;
  EXPECT_EQ(count_instructions(s, "vfmadd", "rsp"), 0) << "accumulators spilled to the stack:\n" << s;
}

TEST(WinogradAsm, X86Avx2GemmIsYmmFma) {
  std::string s = template_assembly(schedules::conv2d_winograd_template(), kLayer, "x86-avx2");
  EXPECT_GE(input_broadcasts(s, "ymm"), 6) << s;
  EXPECT_GE(count_instructions(s, "vfmadd", "ymm"), 12) << s;  // 6 tiles x 2 ymm
  EXPECT_EQ(count_instructions(s, "vfmadd", "zmm"), 0) << s;
}

TEST(WinogradAsm, ArmNeonGemmIsFmla) {
  std::string s = template_assembly(schedules::conv2d_winograd_template(), kLayer, "arm-neon");
  // 6 tiles x 4 q registers, each FMA by a lane of the loaded input values.
  EXPECT_GE(count_instructions(s, "fmla", ".s["), 24) << s;
}

}  // namespace
}  // namespace kiln::testing
