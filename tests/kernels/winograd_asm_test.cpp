// Assembly checks for conv2d.winograd (as Halide's simd_op_check): the batched GEMM of its
// fallback config is a register tile of vector FMAs with a broadcast input on AVX-512 (zmm),
// AVX2 (ymm) and NEON (fmla .4s), with no accumulator spilled to the stack. Codegen only:
// nothing runs, so these hold on any host.
#include <gtest/gtest.h>

#include <sstream>

#include "compiler/codegen/codegen.h"
#include "schedules/winograd.h"
#include "tuner/builder.h"

namespace kiln::testing {
namespace {

std::string assembly(const std::string& target, const schedules::Workload& w) {
  Target t = target_from_name(target);
  const auto& tpl = schedules::conv2d_winograd_template();
  codegen::CodegenOptions o;
  o.emit_assembly = true;
  return codegen::compile_module(
             {tuner::lower_template(tpl, w, t, tpl.fallback(w, t), "kernel").func}, t, o)
      .assembly;
}

// Instruction lines whose mnemonic starts with `mnemonic` and that mention `operand`.
int count(const std::string& s, const std::string& mnemonic, const std::string& operand) {
  std::istringstream in(s);
  int n = 0;
  for (std::string line; std::getline(in, line);) {
    size_t at = line.find_first_not_of(" \t");
    if (at == std::string::npos || line.compare(at, mnemonic.size(), mnemonic) != 0) continue;
    if (line.find(operand) != std::string::npos) ++n;
  }
  return n;
}

const schedules::Workload kLayer{"conv2d",
                                 {{"N", 1}, {"C", 64}, {"H", 28}, {"W", 28}, {"O", 64},
                                  {"KH", 3}, {"KW", 3}, {"stride", 1}, {"pad", 1}},
                                 ir::DataType::f32(),
                                 {}};

// Broadcasts of a transformed input value from memory (not a transform's constant, which
// LLVM loads %rip-relative): the GEMM's A operand.
int input_broadcasts(const std::string& s, const std::string& reg) {
  return count(s, "vbroadcastss", reg) - count(s, "vbroadcastss", "rip");
}

TEST(WinogradAsm, X86Avx512GemmIsZmmFma) {
  std::string s = assembly("x86-avx512", kLayer);
  // The fallback tile: 6 tiles x 4 zmm of output channels, one FMA each per input channel:
  // 6 broadcasts and 24 FMAs in the loop body (the transforms add more FMAs, no broadcasts).
  EXPECT_GE(input_broadcasts(s, "zmm"), 6) << s;
  EXPECT_GE(count(s, "vfmadd", "zmm"), 24) << s;
  EXPECT_EQ(count(s, "vfmadd", "rsp"), 0) << "accumulators spilled to the stack:\n" << s;
}

TEST(WinogradAsm, X86Avx2GemmIsYmmFma) {
  std::string s = assembly("x86-avx2", kLayer);
  EXPECT_GE(input_broadcasts(s, "ymm"), 6) << s;
  EXPECT_GE(count(s, "vfmadd", "ymm"), 12) << s;  // 6 tiles x 2 ymm
  EXPECT_EQ(count(s, "vfmadd", "zmm"), 0) << s;
}

TEST(WinogradAsm, ArmNeonGemmIsFmla) {
  std::string s = assembly("arm-neon", kLayer);
  // 6 tiles x 4 q registers, each FMA by a lane of the loaded input values.
  EXPECT_GE(count(s, "fmla", ".s["), 24) << s;
}

}  // namespace
}  // namespace kiln::testing
