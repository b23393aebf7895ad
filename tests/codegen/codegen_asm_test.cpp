// Assembly checks: the instructions each target should get (as Halide's simd_op_check), and
// cross-compiled AArch64 modules that link into self-contained .so files. No execution:
// ARM kernels run under qemu in other suites.
#include <elf.h>
#include <gtest/gtest.h>

#include <sstream>

#include "compiler/ir/op.h"
#include "tests/codegen/codegen_test_util.h"
#include "tests/native_targets.h"

namespace kiln::codegen::testing {
namespace {

using ir::Buffer;
using ir::DataType;
using ir::Expr;
using ir::LoweredFunc;
using ir::Var;

// C = A * B + C over `n` elements in vectors of `lanes`.
LoweredFunc fma_kernel(DataType t, int lanes, int64_t n = 1024) {
  Buffer a = ir::make_buffer("A", t, {n});
  Buffer b = ir::make_buffer("B", t, {n});
  Buffer c = ir::make_buffer("C", t, {n});
  Var i("i");
  Expr r = ir::make_ramp(i * lanes, 1, lanes);
  auto ld = [&](const Buffer& buf) { return ir::make_load(buf, {r}); };
  return {"fma_" + t.str(),
          {a, b, c},
          ir::make_for(i, 0, n / lanes, ir::ForKind::Serial,
                       ir::make_store(c, ld(a) * ld(b) + ld(c), {r}))};
}

// A scalar loop, for the loop vectoriser to widen.
LoweredFunc scalar_add_kernel() {
  const int64_t n = 4096;
  Buffer a = ir::make_buffer("A", DataType::f32(), {n});
  Buffer c = ir::make_buffer("C", DataType::f32(), {n});
  Var i("i");
  return {"sadd",
          {a, c},
          ir::make_for(i, 0, n, ir::ForKind::Serial,
                       ir::make_store(c, ir::make_load(c, {i}) + ir::make_load(a, {i}), {i}))};
}

std::string assembly(const std::vector<LoweredFunc>& funcs, const std::string& target) {
  CodegenOptions o;
  o.emit_assembly = true;
  o.emit_llvm_ir = true;
  return compile_module(funcs, target_from_name(target), o).assembly;
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// True when some instruction line starting with `mnemonic` mentions `operand`.
bool has_instruction(const std::string& s, const std::string& mnemonic,
                     const std::string& operand) {
  std::istringstream in(s);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("\t" + mnemonic, 0) == 0 && contains(line, operand)) return true;
  }
  return false;
}

TEST(CodegenAsm, X86Avx512FmaUsesZmm) {
  std::string s = assembly({fma_kernel(DataType::f32(), 16)}, "x86-avx512");
  EXPECT_TRUE(has_instruction(s, "vfmadd", "zmm")) << s;
}

TEST(CodegenAsm, X86Avx2FmaUsesYmm) {
  std::string s = assembly({fma_kernel(DataType::f32(), 16)}, "x86-avx2");
  EXPECT_TRUE(has_instruction(s, "vfmadd", "ymm")) << s;
  EXPECT_FALSE(contains(s, "zmm")) << s;
}

TEST(CodegenAsm, X86Avx512VectorisesScalarLoopsWithZmm) {
  std::string s = assembly({scalar_add_kernel()}, "x86-avx512");
  EXPECT_TRUE(has_instruction(s, "vaddps", "zmm")) << s;
  EXPECT_FALSE(contains(s, "memset")) << s;
}

// C = fast_reciprocal(A) in vectors of `lanes`.
LoweredFunc reciprocal_kernel(int lanes) {
  const int64_t n = 1024;
  Buffer a = ir::make_buffer("A", DataType::f32(), {n});
  Buffer c = ir::make_buffer("C", DataType::f32(), {n});
  Var i("i");
  Expr r = ir::make_ramp(i * lanes, 1, lanes);
  Expr v = ir::make_call(DataType::f32(lanes), "fast_reciprocal", {ir::make_load(a, {r})});
  return {
      "rcp", {a, c}, ir::make_for(i, 0, n / lanes, ir::ForKind::Serial, ir::make_store(c, v, {r}))};
}

// fast_reciprocal is an estimate and one Newton step where AVX-512 has VRCP14PS (any vector
// width), and a divide on AVX2 and NEON, whose estimates would need more steps.
TEST(CodegenAsm, FastReciprocalEstimatesOnlyOnAvx512) {
  for (int lanes : {16, 8, 4}) {
    std::string s = assembly({reciprocal_kernel(lanes)}, "x86-avx512");
    EXPECT_TRUE(contains(s, "vrcp14ps")) << lanes << " lanes\n" << s;
    EXPECT_FALSE(contains(s, "vdivps")) << lanes << " lanes\n" << s;
  }
  std::string avx2 = assembly({reciprocal_kernel(8)}, "x86-avx2");
  EXPECT_TRUE(has_instruction(avx2, "vdivps", "ymm")) << avx2;
  EXPECT_FALSE(contains(avx2, "vrcp")) << avx2;
  std::string neon = assembly({reciprocal_kernel(4)}, "arm-neon");
  EXPECT_TRUE(has_instruction(neon, "fdiv", ".4s")) << neon;
}

TEST(CodegenAsm, ArmNeonFmaUsesFmla4s) {
  std::string s = assembly({fma_kernel(DataType::f32(), 4)}, "arm-neon");
  EXPECT_TRUE(has_instruction(s, "fmla", ".4s")) << s;
}

TEST(CodegenAsm, ArmFp16FmaUsesFmla8h) {
  std::string s = assembly({fma_kernel(DataType::f16(), 8)}, "arm-fp16");
  EXPECT_TRUE(has_instruction(s, "fmla", ".8h")) << s;
  // Without fullfp16 the same kernel computes in f32.
  std::string neon = assembly({fma_kernel(DataType::f16(), 8)}, "arm-neon");
  for (const char* op : {"fmla", "fmul", "fadd"})
    EXPECT_FALSE(has_instruction(neon, op, ".8h")) << neon;
  EXPECT_TRUE(contains(neon, "fcvtl")) << neon;
}

TEST(CodegenAsm, Bf16ConversionNeverCallsLibgcc) {
  for (const char* t : {"x86-avx2", "x86-avx512", test::kX86Bf16, "arm-neon", "arm-bf16"}) {
    std::string s = assembly({fma_kernel(DataType::bf16(), 16)}, t);
    EXPECT_FALSE(contains(s, "__truncsfbf2")) << t;
    EXPECT_FALSE(contains(s, "call")) << t;  // x86: no calls at all in a plain kernel
    EXPECT_FALSE(contains(s, "\tbl\t")) << t;
    if (std::string(t) == "arm-bf16") {
      EXPECT_TRUE(contains(s, "bfcvt")) << s;
    }
    // The x86-avx512 preset has no avx512bf16 on any build machine; the profile has it.
    EXPECT_EQ(contains(s, "vcvtneps2bf16"), std::string(t) == test::kX86Bf16) << t << "\n" << s;
  }
}

TEST(CodegenAsm, ArmBf16MatmulIntrinsic) {
  const int64_t n = 8;
  Buffer acc = ir::make_buffer("ACC", DataType::f32(), {4});
  Buffer a = ir::make_buffer("A", DataType::bf16(), {n});
  Buffer b = ir::make_buffer("B", DataType::bf16(), {n});
  Expr call = ir::make_call(
      DataType::f32(4), "llvm.aarch64.neon.bfmmla",
      {ir::make_load(acc, {ir::make_ramp(0, 1, 4)}), ir::make_load(a, {ir::make_ramp(0, 1, 8)}),
       ir::make_load(b, {ir::make_ramp(0, 1, 8)})},
      ir::CallKind::LLVMIntrinsic);
  LoweredFunc f{"mmla", {acc, a, b}, ir::make_store(acc, call, {ir::make_ramp(0, 1, 4)})};
  EXPECT_TRUE(contains(assembly({f}, "arm-bf16"), "bfmmla"));
}

TEST(CodegenAsm, AArch64ModuleLinksIntoSelfContainedSo) {
  std::string path =
      build({fma_kernel(DataType::f32(), 4), scalar_add_kernel()}, target_from_name("arm-bf16"));
  ElfSummary elf = read_elf(path);
  EXPECT_EQ(elf.machine, EM_AARCH64);
  EXPECT_TRUE(elf.needed.empty());
  EXPECT_TRUE(elf.undefined.empty()) << elf.undefined[0];
  std::sort(elf.exported.begin(), elf.exported.end());
  EXPECT_EQ(elf.exported, (std::vector<std::string>{"fma_f32", "kiln_module_init", "kiln_module_target", "sadd"}));
}

TEST(CodegenAsm, LlvmIrHasNoaliasBodiesAndExportedEntryPoints) {
  CodegenOptions o;
  o.emit_llvm_ir = true;
  o.opt_level = 0;
  std::string ir = compile_module({scalar_add_kernel()}, target_from_name("x86-avx2"), o).llvm_ir;
  EXPECT_TRUE(contains(ir, "define i32 @sadd(ptr")) << ir;
  EXPECT_TRUE(contains(ir, "define i32 @kiln_module_init(ptr")) << ir;
  EXPECT_TRUE(contains(ir, "@kiln_api = internal global ptr null")) << ir;
}

}  // namespace
}  // namespace kiln::codegen::testing
