// Assembly checks for the low-precision dense templates (as Halide's simd_op_check): the bf16
// paths really use `vdpbf16ps zmm` (x86) and `bfmmla`, or by knob `bfdot` (AArch64); f16
// accumulation uses `fmla .8h`, and the default f16 path accumulates in f32 (`fmla .4s`).
// Codegen only: nothing runs, so these hold on any host.
#include <gtest/gtest.h>

#include <sstream>

#include "compiler/codegen/codegen.h"
#include "schedules/dense_lowp.h"
#include "tuner/builder.h"

namespace kiln::testing {
namespace {

using ir::DataType;
using schedules::Workload;

std::string assembly(const schedules::OpTemplate& tpl, const Workload& w, const std::string& target,
                     const std::map<std::string, int64_t>& knobs = {}) {
  Target t = target_from_name(target);
  // The x86-avx512 preset has avx512bf16 only where this CPU does; nothing runs here, so
  // check the code for a CPU that has it.
  if (t.is_x86() && !t.has("avx512bf16")) t.features.push_back("+avx512bf16");
  schedules::Config cfg = tpl.fallback(w, t);
  for (const auto& [k, v] : knobs) cfg.set(k, v);
  codegen::CodegenOptions o;
  o.emit_assembly = true;
  return codegen::compile_module({tuner::lower_template(tpl, w, t, cfg, "kernel").func}, t, o)
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

Workload dense(int64_t m, int64_t n, int64_t k, DataType t) {
  return Workload{"dense", {{"M", m}, {"N", n}, {"K", k}}, t, {}};
}

TEST(LowpAsm, X86Bf16UsesVdpbf16psOnZmm) {
  std::string s = assembly(schedules::dense_bf16_x86_template(),
                           dense(64, 128, 64, DataType::bf16()), "x86-avx512");
  // The fallback tile: 6 rows x 4 zmm, K unrolled by 2 -> 48 in the loop body.
  EXPECT_GE(count(s, "vdpbf16ps", "zmm"), 48) << s;
  // A's pair of bf16 broadcast as one 32-bit value (LLVM picks either spelling).
  EXPECT_GE(count(s, "vbroadcastss", "zmm") + count(s, "vpbroadcastd", "zmm"), 1) << s;
  EXPECT_EQ(count(s, "vdpbf16ps", "rsp"), 0) << "accumulators spilled to the stack:\n" << s;
}

TEST(LowpAsm, ArmBf16UsesBfmmla) {
  std::string s = assembly(schedules::dense_bf16_arm_template(),
                           dense(32, 32, 64, DataType::bf16()), "arm-bf16");
  EXPECT_GE(count(s, "bfmmla", "v"), 16) << s;  // 4 x 4 tiles of 2x2 per K block
}

TEST(LowpAsm, ArmBf16BfdotKnobUsesBfdot) {
  std::string s = assembly(schedules::dense_bf16_arm_template(),
                           dense(32, 32, 64, DataType::bf16()), "arm-bf16", {{"bfdot", 1}});
  EXPECT_GE(count(s, "bfdot", "v"), 16) << s;  // 8 rows x 4 vectors of 4 columns
  EXPECT_EQ(count(s, "bfmmla", "v"), 0) << s;
}

TEST(LowpAsm, ArmF16AccumulationUsesFmla8h) {
  std::string s = assembly(schedules::dense_f16_arm_template(), dense(24, 32, 64, DataType::f16()),
                           "arm-fp16", {{"f16_acc", 1}});
  EXPECT_GE(count(s, "fmla", ".8h"), 8) << s;
}

TEST(LowpAsm, ArmF16DefaultAccumulatesInF32) {
  std::string s =
      assembly(schedules::dense_f16_arm_template(), dense(24, 32, 64, DataType::f16()), "arm-fp16");
  EXPECT_GE(count(s, "fmla", ".4s"), 8) << s;
  EXPECT_EQ(count(s, "fmla", ".8h"), 0) << s;
}

}  // namespace
}  // namespace kiln::testing
