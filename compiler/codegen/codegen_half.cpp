// f16 and bf16. Conversions round to nearest even. Where the target has an instruction for
// a conversion, LLVM's fpext/fptrunc select it; everywhere else LLVM would call a compiler
// runtime helper (__truncsfbf2, __extendhfsf2...) that a kernel .so cannot link against, so
// kiln writes the conversion as integer arithmetic that vectorises like any other code.
#include "compiler/codegen/codegen_llvm.h"
#include "compiler/base/error.h"

namespace kiln::codegen {

using ir::DataType;

bool CodeGenLLVM::widens(DataType t) const {
  if (t.is_bfloat()) return true;  // no target has bf16 arithmetic
  return t.code == ir::TypeCode::Float && t.bits == 16 && !hooks_.native_f16_arith();
}

llvm::Value* CodeGenLLVM::float_convert(llvm::Value* v, DataType from, DataType to) {
  int lanes = from.lanes;
  if (from == to) return v;
  if (from.bits == 16) {
    v = half_to_f32(v, from);
    from = DataType::f32(lanes);
    if (from == to) return v;
    if (to.bits != 16) return b_.CreateFPExt(v, llvm_type(to));
  }
  if (to.bits == 16) {
    if (from.bits == 64) v = f64_to_f32_round_odd(v, lanes);
    return f32_to_half(v, to);
  }
  if (from.bits < to.bits) return b_.CreateFPExt(v, llvm_type(to));
  return b_.CreateFPTrunc(v, llvm_type(to));
}

llvm::Value* CodeGenLLVM::half_to_f32(llvm::Value* v, DataType from) {
  int lanes = from.lanes;
  llvm::Type* f32 = llvm_type(DataType::f32(lanes));
  if (from.is_bfloat()) {
    // bf16 is the top half of an f32: exact, and cheaper than any conversion instruction.
    llvm::Value* bits = b_.CreateBitCast(v, llvm_type(DataType::u16(lanes)));
    bits = b_.CreateZExt(bits, llvm_type(DataType::u32(lanes)));
    bits = b_.CreateShl(bits, llvm::ConstantInt::get(bits->getType(), 16));
    return b_.CreateBitCast(bits, f32);
  }
  internal_check(from.bits == 16) << "half_to_f32 of " << from.str();
  if (hooks_.native_f16_convert()) return b_.CreateFPExt(v, f32);
  return f16_to_f32_soft(v, lanes);
}

llvm::Value* CodeGenLLVM::f32_to_half(llvm::Value* v, DataType to) {
  int lanes = to.lanes;
  if (to.is_bfloat()) {
    if (hooks_.native_bf16_convert()) return b_.CreateFPTrunc(v, llvm_type(to));
    return f32_to_bf16_soft(v, lanes);
  }
  if (hooks_.native_f16_convert()) return b_.CreateFPTrunc(v, llvm_type(to));
  return f32_to_f16_soft(v, lanes);
}

llvm::Value* CodeGenLLVM::f32_to_bf16_soft(llvm::Value* v, int lanes) {
  llvm::Type* u32 = llvm_type(DataType::u32(lanes));
  auto c = [&](uint32_t x) { return llvm::ConstantInt::get(u32, x); };
  llvm::Value* bits = b_.CreateBitCast(v, u32);
  // Round to nearest even: add 0x7fff plus the lowest kept bit, then drop 16 bits.
  llvm::Value* lsb = b_.CreateAnd(b_.CreateLShr(bits, c(16)), c(1));
  llvm::Value* rounded = b_.CreateLShr(b_.CreateAdd(b_.CreateAdd(bits, c(0x7fff)), lsb), c(16));
  // A NaN must stay a NaN (rounding could carry it into infinity): keep it, made quiet.
  llvm::Value* nan = b_.CreateOr(b_.CreateLShr(bits, c(16)), c(0x40));
  llvm::Value* r = b_.CreateSelect(b_.CreateFCmpUNO(v, v), nan, rounded);
  r = b_.CreateTrunc(r, llvm_type(DataType::u16(lanes)));
  return b_.CreateBitCast(r, llvm_type(DataType::bf16(lanes)));
}

llvm::Value* CodeGenLLVM::f32_to_f16_soft(llvm::Value* v, int lanes) {
  // Fabian Giesen's float_to_half_fast3_rtne, branch-free with selects.
  llvm::Type* u32 = llvm_type(DataType::u32(lanes));
  llvm::Type* f32 = llvm_type(DataType::f32(lanes));
  auto c = [&](uint32_t x) { return llvm::ConstantInt::get(u32, x); };
  llvm::Value* bits = b_.CreateBitCast(v, u32);
  llvm::Value* sign = b_.CreateAnd(bits, c(0x80000000u));
  llvm::Value* mag = b_.CreateXor(bits, sign);
  // Too big for f16: infinity, or a quiet NaN.
  llvm::Value* big = b_.CreateSelect(b_.CreateICmpUGT(mag, c(0x7f800000u)), c(0x7e00), c(0x7c00));
  // Subnormal results: let the FPU round by adding a magic number that aligns the bits.
  const uint32_t denorm_magic = ((127 - 15) + (23 - 10) + 1) << 23;
  llvm::Value* sub =
      b_.CreateFAdd(b_.CreateBitCast(mag, f32), b_.CreateBitCast(c(denorm_magic), f32));
  sub = b_.CreateSub(b_.CreateBitCast(sub, u32), c(denorm_magic));
  // Normal results: rebias the exponent and round to nearest even by hand.
  llvm::Value* odd = b_.CreateAnd(b_.CreateLShr(mag, c(13)), c(1));
  llvm::Value* normal = b_.CreateAdd(mag, c(((15u - 127u) << 23) + 0xfff));
  normal = b_.CreateLShr(b_.CreateAdd(normal, odd), c(13));
  llvm::Value* r = b_.CreateSelect(b_.CreateICmpULT(mag, c(113u << 23)), sub, normal);
  r = b_.CreateSelect(b_.CreateICmpUGE(mag, c((127u + 16u) << 23)), big, r);
  r = b_.CreateOr(r, b_.CreateLShr(sign, c(16)));
  r = b_.CreateTrunc(r, llvm_type(DataType::u16(lanes)));
  return b_.CreateBitCast(r, llvm_type(DataType::f16(lanes)));
}

llvm::Value* CodeGenLLVM::f16_to_f32_soft(llvm::Value* v, int lanes) {
  // Giesen's half_to_float: rebias, then fix up infinities/NaNs and subnormals.
  llvm::Type* u32 = llvm_type(DataType::u32(lanes));
  llvm::Type* f32 = llvm_type(DataType::f32(lanes));
  auto c = [&](uint32_t x) { return llvm::ConstantInt::get(u32, x); };
  llvm::Value* h = b_.CreateZExt(b_.CreateBitCast(v, llvm_type(DataType::u16(lanes))), u32);
  llvm::Value* o = b_.CreateShl(b_.CreateAnd(h, c(0x7fff)), c(13));
  llvm::Value* exp = b_.CreateAnd(o, c(0x7c00u << 13));
  o = b_.CreateAdd(o, c((127u - 15u) << 23));
  llvm::Value* inf_nan = b_.CreateAdd(o, c((128u - 16u) << 23));
  llvm::Value* magic = b_.CreateBitCast(c(113u << 23), f32);
  llvm::Value* sub = b_.CreateFSub(b_.CreateBitCast(b_.CreateAdd(o, c(1u << 23)), f32), magic);
  sub = b_.CreateBitCast(sub, u32);
  llvm::Value* r = b_.CreateSelect(b_.CreateICmpEQ(exp, c(0x7c00u << 13)), inf_nan, o);
  r = b_.CreateSelect(b_.CreateICmpEQ(exp, c(0)), sub, r);
  r = b_.CreateOr(r, b_.CreateShl(b_.CreateAnd(h, c(0x8000)), c(16)));
  return b_.CreateBitCast(r, f32);
}

llvm::Value* CodeGenLLVM::f64_to_f32_round_odd(llvm::Value* v, int lanes) {
  // f64 -> f32 -> 16 bits would round twice. Rounding the first step to odd (keep the
  // inexact bit in the last place) makes the second rounding the correct one.
  llvm::Type* u32 = llvm_type(DataType::u32(lanes));
  auto c = [&](uint32_t x) { return llvm::ConstantInt::get(u32, x); };
  llvm::Value* t = b_.CreateFPTrunc(v, llvm_type(DataType::f32(lanes)));
  llvm::Value* bits = b_.CreateBitCast(t, u32);
  llvm::Value* back = b_.CreateFPExt(t, v->getType());
  llvm::Value* inexact = b_.CreateFCmpONE(back, v);
  llvm::Value* even = b_.CreateICmpEQ(b_.CreateAnd(bits, c(1)), c(0));
  // The other neighbour of v is one step away in magnitude: up if t fell short.
  llvm::Value* short_of = b_.CreateFCmpOLT(b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, back),
                                           b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, v));
  llvm::Value* other =
      b_.CreateSelect(short_of, b_.CreateAdd(bits, c(1)), b_.CreateSub(bits, c(1)));
  llvm::Value* r = b_.CreateSelect(b_.CreateAnd(inexact, even), other, bits);
  return b_.CreateBitCast(r, llvm_type(DataType::f32(lanes)));
}

}  // namespace kiln::codegen
