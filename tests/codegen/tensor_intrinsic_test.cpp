// Kiln tensor intrinsics (ir::CallKind::TensorIntrinsic): each architecture's table turns a
// kiln name at given types into its instruction, and anything else into a UserError that
// names the intrinsic and the target (never an LLVM abort). Codegen only, nothing runs.
#include <gtest/gtest.h>

#include "compiler/base/error.h"
#include "compiler/ir/op.h"
#include "tests/codegen/codegen_test_util.h"
#include "tests/native_targets.h"

namespace kiln::codegen::testing {
namespace {

using ir::Buffer;
using ir::DataType;
using ir::Expr;
using ir::LoweredFunc;

// ACC = name(ACC, A, B), one vector each.
LoweredFunc intrinsic_kernel(const std::string& name, DataType acc, DataType a, DataType b) {
  Buffer acc_buf = ir::make_buffer("ACC", acc.element(), {64});
  Buffer a_buf = ir::make_buffer("A", a.element(), {64});
  Buffer b_buf = ir::make_buffer("B", b.element(), {64});
  auto vec = [](const Buffer& buf, DataType t) {
    return ir::make_load(buf, {ir::make_ramp(0, 1, t.lanes)});
  };
  Expr call = ir::make_call(acc, name, {vec(acc_buf, acc), vec(a_buf, a), vec(b_buf, b)},
                            ir::CallKind::TensorIntrinsic);
  return {"tensor_intrinsic",
          {acc_buf, a_buf, b_buf},
          ir::make_store(acc_buf, call, {ir::make_ramp(0, 1, acc.lanes)})};
}

LoweredFunc pair_dot(int lanes) {
  return intrinsic_kernel("pair_dot_bf16", DataType::f32(lanes), DataType::bf16(2 * lanes),
                          DataType::bf16(2 * lanes));
}
LoweredFunc mmla() {
  return intrinsic_kernel("mmla_bf16", DataType::f32(4), DataType::bf16(8), DataType::bf16(8));
}

// Nothing runs here: the code is checked for a CPU with AVX512-BF16.
Target x86_bf16() {
  return target_from_name(test::kX86Bf16);
}

std::string assembly(const LoweredFunc& f, const Target& t) {
  CodegenOptions o;
  o.emit_assembly = true;
  return compile_module({f}, t, o).assembly;
}

std::string user_error_of(const LoweredFunc& f, const Target& t) {
  try {
    compile_module({f}, t);
  } catch (const UserError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(TensorIntrinsics, PairDotIsVdpbf16psOnX86AndBfdotOnAArch64) {
  std::string x86 = assembly(pair_dot(16), x86_bf16());
  EXPECT_NE(x86.find("vdpbf16ps"), std::string::npos) << x86;
  EXPECT_NE(x86.find("zmm"), std::string::npos) << x86;
  std::string arm = assembly(pair_dot(4), target_from_name("arm-bf16"));
  EXPECT_NE(arm.find("bfdot"), std::string::npos) << arm;
}

TEST(TensorIntrinsics, MmlaIsBfmmlaOnAArch64) {
  std::string arm = assembly(mmla(), target_from_name("arm-bf16"));
  EXPECT_NE(arm.find("bfmmla"), std::string::npos) << arm;
}

TEST(TensorIntrinsics, NoInstructionOnTheTargetIsAUserError) {
  EXPECT_NE(user_error_of(mmla(), x86_bf16())
                .find("tensor intrinsic 'mmla_bf16' has no instruction on cooperlake"),
            std::string::npos);
  EXPECT_NE(user_error_of(intrinsic_kernel("frobnicate", DataType::f32(4), DataType::bf16(8),
                                           DataType::bf16(8)),
                          target_from_name("arm-bf16"))
                .find("'frobnicate' has no instruction on arm-bf16"),
            std::string::npos);
}

TEST(TensorIntrinsics, OtherTypesAreAUserErrorListingTheForms) {
  std::string msg = user_error_of(pair_dot(8), x86_bf16());
  EXPECT_NE(msg.find("takes (f32x16, bf16x32, bf16x32), not (f32x8, bf16x16, bf16x16)"),
            std::string::npos)
      << msg;
  msg = user_error_of(pair_dot(16), target_from_name("arm-bf16"));
  EXPECT_NE(msg.find("takes (f32x4, bf16x8, bf16x8)"), std::string::npos) << msg;
}

TEST(TensorIntrinsics, MissingFeatureIsAUserError) {
  // The instruction exists on the architecture, not on this target: the LLVM intrinsic's
  // feature check applies.
  EXPECT_NE(
      user_error_of(pair_dot(4), target_from_name("arm-neon")).find("needs target feature bf16"),
      std::string::npos);
  EXPECT_NE(user_error_of(mmla(), target_from_name("arm-fp16")).find("needs target feature bf16"),
            std::string::npos);
  EXPECT_NE(user_error_of(pair_dot(16), target_from_name("x86-avx512"))
                .find("needs target feature avx512bf16"),
            std::string::npos);
}

}  // namespace
}  // namespace kiln::codegen::testing
