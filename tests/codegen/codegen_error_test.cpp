// Bad input: each case must fail with a UserError that says what is wrong, never abort
// the process inside LLVM.
#include <gtest/gtest.h>

#include "tests/codegen/codegen_test_util.h"
#include "compiler/base/error.h"
#include "compiler/ir/op.h"

namespace kiln::codegen::testing {
namespace {

using ir::Buffer;
using ir::DataType;
using ir::Expr;
using ir::LoweredFunc;
using ir::Var;

// Expects `f` to throw UserError with `part` in its message.
template <typename F>
void expect_user_error(F f, const std::string& part) {
  try {
    f();
    ADD_FAILURE() << "no error; expected one mentioning '" << part << "'";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}

TEST(CodegenErrors, UnknownTargetListsPresets) {
  expect_user_error([] { target_from_name("x86-sse9"); }, "x86-sse9");
  expect_user_error([] { target_from_name("x86-sse9"); }, "x86-avx2, x86-avx512, arm-neon");
}

LoweredFunc intrinsic_kernel(const std::string& name, DataType ret, std::vector<DataType> args) {
  std::vector<Buffer> bufs;
  std::vector<Expr> vals;
  for (size_t k = 0; k < args.size(); ++k) {
    bufs.push_back(ir::make_buffer(numbered("A", k), args[k].element(), {64}));
    vals.push_back(ir::make_load(bufs.back(), {ir::make_ramp(0, 1, args[k].lanes)}));
  }
  Buffer out = ir::make_buffer("OUT", ret.element(), {64});
  bufs.push_back(out);
  Expr call = ir::make_call(ret, name, vals, ir::CallKind::LLVMIntrinsic);
  return {"intrin", bufs, ir::make_store(out, call, {ir::make_ramp(0, 1, ret.lanes)})};
}

TEST(CodegenErrors, Bf16IntrinsicWithoutBf16IsAUserError) {
  LoweredFunc mmla = intrinsic_kernel("llvm.aarch64.neon.bfmmla", DataType::f32(4),
                                      {DataType::f32(4), DataType::bf16(8), DataType::bf16(8)});
  expect_user_error([&] { compile_module({mmla}, target_from_name("arm-neon")); }, "bf16");
  expect_user_error([&] { compile_module({mmla}, target_from_name("arm-fp16")); }, "arm-fp16");
  LoweredFunc dp = intrinsic_kernel("llvm.x86.avx512bf16.dpbf16ps.512", DataType::f32(16),
                                    {DataType::f32(16), DataType::bf16(32), DataType::bf16(32)});
  expect_user_error([&] { compile_module({dp}, target_from_name("x86-avx2")); }, "avx512bf16");
  // And an intrinsic of the other architecture.
  expect_user_error([&] { compile_module({dp}, target_from_name("arm-bf16")); },
                    "another architecture");
  // With the feature it compiles.
  EXPECT_NO_THROW(compile_module({mmla}, target_from_name("arm-bf16")));
}

TEST(CodegenErrors, UnknownIntrinsicAndMathFunction) {
  LoweredFunc f = intrinsic_kernel("llvm.x86.no.such.thing", DataType::f32(4), {DataType::f32(4)});
  expect_user_error([&] { compile_module({f}, target_from_name("x86-avx2")); },
                    "unknown LLVM intrinsic");
  Buffer a = ir::make_buffer("A", DataType::f32(), {4});
  Var i("i");
  Expr e = ir::make_call(DataType::f32(), "exp", {ir::make_load(a, {i})});
  LoweredFunc g{"libm", {a}, ir::make_for(i, 0, 4, ir::ForKind::Serial, ir::make_store(a, e, {i}))};
  expect_user_error([&] { compile_module({g}, target_from_name("x86-avx2")); },
                    "unknown math function 'exp'");
}

TEST(CodegenErrors, LocalAllocateNeedsConstantSize) {
  Buffer a = ir::make_buffer("A", DataType::f32(), {64});
  Var i("i"), j("j");
  Buffer t = ir::make_buffer("T", DataType::f32(), {i + 1}, ir::MemScope::Local);
  ir::Stmt body = ir::make_allocate(t, ir::make_for(j, 0, i + 1, ir::ForKind::Serial,
                                                    ir::make_store(t, ir::make_load(a, {j}), {j})));
  LoweredFunc f{"dyn_local", {a}, ir::make_for(i, 0, 8, ir::ForKind::Serial, body)};
  expect_user_error([&] { compile_module({f}, target_from_name("host")); }, "constant size");
}

TEST(CodegenErrors, DuplicateKernelNames) {
  Buffer a = ir::make_buffer("A", DataType::f32(), {4});
  Var i("i");
  LoweredFunc f{
      "k",
      {a},
      ir::make_for(i, 0, 4, ir::ForKind::Serial, ir::make_store(a, ir::make_load(a, {i}), {i}))};
  expect_user_error([&] { compile_module({f, f}, target_from_name("host")); }, "used twice");
}

TEST(CodegenErrors, UnflattenedAccessIsAnInternalError) {
  Buffer a = ir::make_buffer("A", DataType::f32(), {4, 4});
  Var i("i");
  LoweredFunc f{"k2",
                {a},
                ir::make_for(i, 0, 4, ir::ForKind::Serial,
                             ir::make_store(a, ir::make_load(a, {i, i}), {i, i}))};
  EXPECT_THROW(compile_module({f}, target_from_name("host")), InternalError);
}

}  // namespace
}  // namespace kiln::codegen::testing
