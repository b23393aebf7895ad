// Expressions: arithmetic with kiln's semantics (floor division, contracted float ops),
// casts, and calls to math functions and LLVM intrinsics.
#include <llvm/IR/Intrinsics.h>

#include <bit>

#include "compiler/base/error.h"
#include "compiler/codegen/codegen_llvm.h"
#include "compiler/ir/op.h"
#include "compiler/ir/printer.h"
#include "kiln/kernel_abi.h"

namespace kiln::codegen {

using ir::DataType;
using ir::ExprKind;

llvm::Type* CodeGenLLVM::with_lanes(llvm::Type* scalar, int lanes) {
  return lanes == 1 ? scalar : llvm::FixedVectorType::get(scalar, lanes);
}

llvm::Type* CodeGenLLVM::llvm_type(DataType t) {
  llvm::Type* s = nullptr;
  switch (t.code) {
    case ir::TypeCode::Int:
    case ir::TypeCode::UInt:
      s = llvm::Type::getIntNTy(ctx_, t.bits);
      break;
    case ir::TypeCode::Float:
      if (t.bits == 16)
        s = llvm::Type::getHalfTy(ctx_);
      else if (t.bits == 32)
        s = llvm::Type::getFloatTy(ctx_);
      else if (t.bits == 64)
        s = llvm::Type::getDoubleTy(ctx_);
      break;
    case ir::TypeCode::BFloat:
      if (t.bits == 16) s = llvm::Type::getBFloatTy(ctx_);
      break;
    case ir::TypeCode::Handle:
      s = llvm::PointerType::get(ctx_, 0);
      break;
  }
  internal_check(s != nullptr) << "no LLVM type for " << t.str();
  return with_lanes(s, t.lanes);
}

llvm::Type* CodeGenLLVM::memory_type(DataType element) {
  // <16 x i1> in memory is a packed bitmask; kiln stores one byte per bool.
  if (element.is_bool()) return llvm::Type::getInt8Ty(ctx_);
  return llvm_type(element.element());
}

llvm::Value* CodeGenLLVM::const_i64(int64_t v) {
  return b_.getInt64(static_cast<uint64_t>(v));
}
llvm::Value* CodeGenLLVM::const_i32(int32_t v) {
  return b_.getInt32(static_cast<uint32_t>(v));
}

llvm::Value* CodeGenLLVM::lookup_var(const ir::VarNode* v) {
  auto it = fn_.vars.find(v);
  internal_check(it != fn_.vars.end()) << "variable " << v->name << " is not defined here";
  return it->second;
}

llvm::Value* CodeGenLLVM::emit(const ir::Expr& e) {
  internal_check(e.defined()) << "codegen of an undefined expression";
  switch (e.kind()) {
    case ExprKind::IntImm:
      return llvm::ConstantInt::get(llvm_type(e.type()),
                                    static_cast<uint64_t>(e.as<ir::IntImmNode>()->value),
                                    e.type().is_int());
    case ExprKind::FloatImm:
      return llvm::ConstantFP::get(llvm_type(e.type()), e.as<ir::FloatImmNode>()->value);
    case ExprKind::StringImm:
      internal_error() << "string literal reached codegen: " << e;
      return nullptr;
    case ExprKind::Var:
      return lookup_var(e.as<ir::VarNode>());
    case ExprKind::Not:
      return b_.CreateNot(emit(e.as<ir::NotNode>()->a));
    case ExprKind::Select: {
      const auto* op = e.as<ir::SelectNode>();
      llvm::Value* c = emit(op->condition);
      llvm::Value* t = emit(op->true_value);
      llvm::Value* f = emit(op->false_value);
      if (!c->getType()->isVectorTy() && t->getType()->isVectorTy())
        c = b_.CreateVectorSplat(e.type().lanes, c);
      return b_.CreateSelect(c, t, f);
    }
    case ExprKind::Cast: {
      const auto* op = e.as<ir::CastNode>();
      return emit_cast(emit(op->value), op->value.type(), e.type());
    }
    case ExprKind::Load:
      return emit_load(e.as<ir::LoadNode>());
    case ExprKind::Ramp:
      return emit_ramp(e.as<ir::RampNode>());
    case ExprKind::Broadcast: {
      const auto* op = e.as<ir::BroadcastNode>();
      return b_.CreateVectorSplat(op->lanes, emit(op->value));
    }
    case ExprKind::Call:
      return emit_call(e.as<ir::CallNode>());
    case ExprKind::Let: {
      const auto* op = e.as<ir::LetNode>();
      llvm::Value* v = emit(op->value);
      if (llvm::isa<llvm::Instruction>(v) && !v->hasName()) v->setName(op->var.name());
      ScopedBinding bind(fn_.vars, op->var.node(), v);
      return emit(op->body);
    }
    case ExprKind::Reduce:
      internal_error() << "Reduce reached codegen (lowering should have removed it): " << e;
      return nullptr;
    default:
      return emit_binary(e.as<ir::BinaryNode>());
  }
}

llvm::Value* CodeGenLLVM::emit_ramp(const ir::RampNode* op) {
  llvm::Value* base = b_.CreateVectorSplat(op->lanes, emit(op->base));
  llvm::Value* stride = b_.CreateVectorSplat(op->lanes, emit(op->stride));
  std::vector<llvm::Constant*> steps;
  llvm::Type* elem = llvm_type(op->base.type());
  for (int i = 0; i < op->lanes; ++i) steps.push_back(llvm::ConstantInt::get(elem, i));
  return b_.CreateAdd(base, b_.CreateMul(stride, llvm::ConstantVector::get(steps)));
}

llvm::Value* CodeGenLLVM::emit_binary(const ir::BinaryNode* op) {
  DataType t = op->a.type();
  llvm::Value* a = emit(op->a);
  llvm::Value* b = emit(op->b);
  if (op->kind >= ExprKind::EQ && op->kind <= ExprKind::GE) return emit_compare(op->kind, t, a, b);
  if (op->kind == ExprKind::And) return b_.CreateAnd(a, b);
  if (op->kind == ExprKind::Or) return b_.CreateOr(a, b);
  if (t.is_float()) {
    if (!widens(t)) return emit_float_binary(op->kind, t, a, b);
    DataType wide = DataType::f32(t.lanes);
    llvm::Value* r = emit_float_binary(op->kind, wide, half_to_f32(a, t), half_to_f32(b, t));
    return f32_to_half(r, t);
  }
  return emit_int_binary(op->kind, t, a, b, op->b);
}

llvm::Value* CodeGenLLVM::emit_float_binary(ExprKind kind, DataType t, llvm::Value* a,
                                            llvm::Value* b) {
  // `contract` lets mul + add become one FMA, as -ffp-contract=fast would; nothing else
  // about IEEE semantics is relaxed.
  llvm::FastMathFlags fmf;
  fmf.setAllowContract(true);
  llvm::IRBuilder<>::FastMathFlagGuard guard(b_);
  b_.setFastMathFlags(fmf);
  auto call1 = [&](llvm::Intrinsic::ID id, llvm::Value* x) {
    return b_.CreateUnaryIntrinsic(id, x);
  };
  switch (kind) {
    case ExprKind::Add:
      return b_.CreateFAdd(a, b);
    case ExprKind::Sub:
      return b_.CreateFSub(a, b);
    case ExprKind::Mul:
      return b_.CreateFMul(a, b);
    case ExprKind::Div:
      return b_.CreateFDiv(a, b);
    case ExprKind::FloorDiv:
      return call1(llvm::Intrinsic::floor, b_.CreateFDiv(a, b));
    // frem would become a call to fmod: a - b * trunc(a / b) stays inline.
    case ExprKind::Mod:
      return b_.CreateFSub(a, b_.CreateFMul(b, call1(llvm::Intrinsic::trunc, b_.CreateFDiv(a, b))));
    case ExprKind::FloorMod:
      return b_.CreateFSub(a, b_.CreateFMul(b, call1(llvm::Intrinsic::floor, b_.CreateFDiv(a, b))));
    // Compare + select rather than minnum/maxnum: what C's `a < b ? a : b` means, and it
    // vectorises to vminps/fmin on every target.
    case ExprKind::Min:
      return b_.CreateSelect(b_.CreateFCmpOLT(a, b), a, b);
    case ExprKind::Max:
      return b_.CreateSelect(b_.CreateFCmpOGT(a, b), a, b);
    default:
      break;
  }
  internal_error() << "float operator " << static_cast<int>(kind) << " on " << t.str();
  return nullptr;
}

namespace {
// log2 of a positive power-of-two constant divisor, if it is one.
std::optional<int> power_of_two_divisor(const ir::Expr& e) {
  auto c = ir::as_const_int(e);
  if (!c || *c <= 0 || !std::has_single_bit(static_cast<uint64_t>(*c))) return std::nullopt;
  return std::countr_zero(static_cast<uint64_t>(*c));
}
}  // namespace

llvm::Value* CodeGenLLVM::emit_int_binary(ExprKind kind, DataType t, llvm::Value* a, llvm::Value* b,
                                          const ir::Expr& rhs) {
  bool is_signed = t.is_int();
  // Index arithmetic (i64) never wraps in a valid kernel; saying so helps the vectoriser.
  bool nsw = is_signed && t.bits == 64;
  switch (kind) {
    case ExprKind::Add:
      return b_.CreateAdd(a, b, "", false, nsw);
    case ExprKind::Sub:
      return b_.CreateSub(a, b, "", false, nsw);
    case ExprKind::Mul:
      return b_.CreateMul(a, b, "", false, nsw);
    case ExprKind::Div:
      return is_signed ? b_.CreateSDiv(a, b) : b_.CreateUDiv(a, b);
    case ExprKind::Mod:
      return is_signed ? b_.CreateSRem(a, b) : b_.CreateURem(a, b);
    case ExprKind::Min:
      return b_.CreateBinaryIntrinsic(is_signed ? llvm::Intrinsic::smin : llvm::Intrinsic::umin, a,
                                      b);
    case ExprKind::Max:
      return b_.CreateBinaryIntrinsic(is_signed ? llvm::Intrinsic::smax : llvm::Intrinsic::umax, a,
                                      b);
    case ExprKind::FloorDiv:
    case ExprKind::FloorMod:
      break;
    default:
      internal_error() << "integer operator " << static_cast<int>(kind) << " on " << t.str();
  }
  bool div = kind == ExprKind::FloorDiv;
  if (!is_signed) return div ? b_.CreateUDiv(a, b) : b_.CreateURem(a, b);
  if (auto shift = power_of_two_divisor(rhs)) {
    // Floor semantics for free: an arithmetic shift rounds toward -inf, and the low bits
    // of two's complement are the non-negative remainder.
    if (div) return b_.CreateAShr(a, llvm::ConstantInt::get(a->getType(), *shift));
    return b_.CreateAnd(a, llvm::ConstantInt::get(a->getType(), (uint64_t{1} << *shift) - 1));
  }
  // Truncating division, then step toward -inf when the remainder's sign differs from the
  // divisor's.
  llvm::Value* q = b_.CreateSDiv(a, b);
  llvm::Value* r = b_.CreateSRem(a, b);
  llvm::Value* zero = llvm::Constant::getNullValue(a->getType());
  llvm::Value* adjust =
      b_.CreateAnd(b_.CreateICmpNE(r, zero),
                   b_.CreateICmpNE(b_.CreateICmpSLT(r, zero), b_.CreateICmpSLT(b, zero)));
  if (div) return b_.CreateSub(q, b_.CreateZExt(adjust, a->getType()));
  return b_.CreateSelect(adjust, b_.CreateAdd(r, b), r);
}

llvm::Value* CodeGenLLVM::emit_compare(ExprKind kind, DataType t, llvm::Value* a, llvm::Value* b) {
  if (t.is_float()) {
    if (widens(t)) a = half_to_f32(a, t), b = half_to_f32(b, t);
    switch (kind) {
      case ExprKind::EQ:
        return b_.CreateFCmpOEQ(a, b);
      case ExprKind::NE:
        return b_.CreateFCmpUNE(a, b);  // NaN != NaN, as in C
      case ExprKind::LT:
        return b_.CreateFCmpOLT(a, b);
      case ExprKind::LE:
        return b_.CreateFCmpOLE(a, b);
      case ExprKind::GT:
        return b_.CreateFCmpOGT(a, b);
      default:
        return b_.CreateFCmpOGE(a, b);
    }
  }
  internal_check(!t.is_handle()) << "comparison of handles";
  bool s = t.is_int();
  switch (kind) {
    case ExprKind::EQ:
      return b_.CreateICmpEQ(a, b);
    case ExprKind::NE:
      return b_.CreateICmpNE(a, b);
    case ExprKind::LT:
      return s ? b_.CreateICmpSLT(a, b) : b_.CreateICmpULT(a, b);
    case ExprKind::LE:
      return s ? b_.CreateICmpSLE(a, b) : b_.CreateICmpULE(a, b);
    case ExprKind::GT:
      return s ? b_.CreateICmpSGT(a, b) : b_.CreateICmpUGT(a, b);
    default:
      return s ? b_.CreateICmpSGE(a, b) : b_.CreateICmpUGE(a, b);
  }
}

llvm::Value* CodeGenLLVM::emit_cast(llvm::Value* v, DataType from, DataType to) {
  if (from == to) return v;
  internal_check(from.lanes == to.lanes) << "cast " << from.str() << " -> " << to.str();
  internal_check(!from.is_handle() && !to.is_handle())
      << "cast of a handle: " << from.str() << " -> " << to.str();
  llvm::Type* ty = llvm_type(to);
  if (to.is_bool()) {
    if (from.is_float()) {
      if (from.bits == 16) v = half_to_f32(v, from);
      return b_.CreateFCmpUNE(v, llvm::Constant::getNullValue(v->getType()));
    }
    return b_.CreateICmpNE(v, llvm::Constant::getNullValue(v->getType()));
  }
  if (from.is_float() && to.is_float()) return float_convert(v, from, to);
  if (to.is_float()) {
    // Integers go through f32 (or f64) so that no int -> half libcall can appear.
    DataType mid = to.bits == 64 ? to : DataType::f32(to.lanes);
    llvm::Type* mty = llvm_type(mid);
    v = from.is_int() ? b_.CreateSIToFP(v, mty) : b_.CreateUIToFP(v, mty);
    return float_convert(v, mid, to);
  }
  if (from.is_float()) {
    if (from.bits == 16) v = half_to_f32(v, from);
    return to.is_int() ? b_.CreateFPToSI(v, ty) : b_.CreateFPToUI(v, ty);
  }
  return b_.CreateIntCast(v, ty, from.is_int());
}

// v when lo <= v < hi, else a return of KILN_STATUS_INDEX_OUT_OF_RANGE from the function
// being emitted (a parallel task's status reaches the kernel's through parallel_for).
llvm::Value* CodeGenLLVM::emit_range_check(const ir::CallNode* op) {
  internal_check(op->args.size() == 3) << "in_range takes three arguments";
  llvm::Value* v = emit(op->args[0]);
  llvm::Value* lo = emit(op->args[1]);
  llvm::Value* hi = emit(op->args[2]);
  const ir::DataType t = op->args[0].type();
  llvm::Value* inside =
      t.is_float() ? b_.CreateAnd(b_.CreateFCmpOGE(v, lo), b_.CreateFCmpOLT(v, hi))
      : t.is_int() ? b_.CreateAnd(b_.CreateICmpSGE(v, lo), b_.CreateICmpSLT(v, hi))
                   : b_.CreateAnd(b_.CreateICmpUGE(v, lo), b_.CreateICmpULT(v, hi));
  llvm::BasicBlock* outside = new_block("out_of_range");
  llvm::BasicBlock* ok = new_block("in_range");
  b_.CreateCondBr(inside, ok, outside);
  b_.SetInsertPoint(outside);
  emit_return_status(const_i32(KILN_STATUS_INDEX_OUT_OF_RANGE));
  b_.SetInsertPoint(ok);
  return v;
}

llvm::Value* CodeGenLLVM::emit_call(const ir::CallNode* op) {
  switch (op->call_kind) {
    case ir::CallKind::Pure:
      return emit_pure_call(op);
    case ir::CallKind::Reinterpret: {
      internal_check(op->args.size() == 1) << "reinterpret takes one argument";
      llvm::Value* v = emit(op->args[0]);
      llvm::Type* ty = llvm_type(op->type);
      if (v->getType()->isPointerTy()) return b_.CreatePtrToInt(v, ty);
      return b_.CreateBitCast(v, ty);
    }
    case ir::CallKind::Shuffle: {
      // Constant lane indices (ir::make_shuffle checked them): one shufflevector, which the
      // target's instruction selection turns into its permutes.
      std::vector<int> mask;
      for (size_t i = 2; i < op->args.size(); ++i)
        mask.push_back(static_cast<int>(*ir::as_const_int(op->args[i])));
      return b_.CreateShuffleVector(emit(op->args[0]), emit(op->args[1]), mask);
    }
    case ir::CallKind::RangeCheck:
      return emit_range_check(op);
    case ir::CallKind::LLVMIntrinsic:
      break;
    case ir::CallKind::TensorIntrinsic:
      // A whole tile GEMM, not one instruction: codegen_amx.cpp writes its loop.
      if (op->name == "amx_gemm_bf16") return emit_amx_gemm_bf16(op);
      break;
  }
  // A tensor intrinsic is a kiln name for what the architecture's table says; from there on
  // it is the LLVM intrinsic (feature check included).
  const std::string name =
      op->call_kind == ir::CallKind::TensorIntrinsic ? hooks_.llvm_intrinsic_for(*op) : op->name;
  hooks_.check_intrinsic(name);
  user_check(llvm::Function::lookupIntrinsicID(name) != llvm::Intrinsic::not_intrinsic)
      << "unknown LLVM intrinsic " << name;
  std::vector<llvm::Value*> args;
  std::vector<llvm::Type*> types;
  for (const ir::Expr& a : op->args) {
    args.push_back(emit(a));
    types.push_back(args.back()->getType());
  }
  auto* fty = llvm::FunctionType::get(llvm_type(op->type), types, false);
  llvm::FunctionCallee callee = module_.getOrInsertFunction(name, fty);
  internal_check(callee.getFunctionType() == fty)
      << "intrinsic " << name << " used with two different signatures";
  return b_.CreateCall(callee, args);
}

// 1 / x for finite nonzero x, within about half an ulp: the target's estimate and one
// Newton step in FMA form (y + y (1 - x y)) where it has one (ArchHooks::
// reciprocal_estimate), else a divide. A 512-bit divide issues once per 10-16 cycles on
// Intel cores, and its 17-cycle latency sits in the middle of sigmoid's chain.
llvm::Value* CodeGenLLVM::emit_fast_reciprocal(const ir::CallNode* op) {
  DataType t = op->type;
  user_check(op->args.size() == 1 && t == DataType::f32(t.lanes))
      << "fast_reciprocal takes one f32 argument";
  llvm::Value* x = emit(op->args[0]);
  llvm::Type* ty = x->getType();
  llvm::Value* one = llvm::ConstantFP::get(ty, 1.0);
  const std::string estimate = hooks_.reciprocal_estimate(t.lanes);
  if (estimate.empty()) return b_.CreateFDiv(one, x);
  hooks_.check_intrinsic(estimate);
  llvm::Type* mask = b_.getIntNTy(std::max(8, int{t.lanes}));
  auto* fty = llvm::FunctionType::get(ty, {ty, ty, mask}, false);
  llvm::Value* y = b_.CreateCall(module_.getOrInsertFunction(estimate, fty),
                                 {x, x, llvm::ConstantInt::getAllOnesValue(mask)});
  llvm::Function* fma = llvm::Intrinsic::getDeclaration(&module_, llvm::Intrinsic::fma, {ty});
  llvm::Value* residual = b_.CreateCall(fma, {b_.CreateFNeg(x), y, one});
  return b_.CreateCall(fma, {y, residual, y});
}

llvm::Value* CodeGenLLVM::emit_pure_call(const ir::CallNode* op) {
  struct Math {
    const char* name;
    llvm::Intrinsic::ID id;
    size_t arity;
  };
  // Every one of these selects to an instruction on kiln's targets (SSE4.1 rounds, NEON
  // frint*): none may become a libm call, since kernels link against nothing.
  static const Math kMath[] = {
      {"fma", llvm::Intrinsic::fma, 3},     {"sqrt", llvm::Intrinsic::sqrt, 1},
      {"fabs", llvm::Intrinsic::fabs, 1},   {"floor", llvm::Intrinsic::floor, 1},
      {"ceil", llvm::Intrinsic::ceil, 1},   {"round", llvm::Intrinsic::roundeven, 1},
      {"trunc", llvm::Intrinsic::trunc, 1},
  };
  if (op->name == "address_of") return emit_address_of(op);
  DataType t = op->type;
  if (op->name == "fast_reciprocal") return emit_fast_reciprocal(op);
  if (op->name == "abs" && op->args.size() == 1 && !t.is_float()) {
    llvm::Value* v = emit(op->args[0]);
    if (!t.is_int()) return v;
    return b_.CreateBinaryIntrinsic(llvm::Intrinsic::abs, v, b_.getFalse());
  }
  std::string known;
  for (const Math& m : kMath) {
    known += (known.empty() ? "" : ", ") + std::string(m.name);
    if (op->name != m.name && !(op->name == "abs" && m.id == llvm::Intrinsic::fabs)) continue;
    user_check(op->args.size() == m.arity)
        << op->name << " takes " << m.arity << " arguments, got " << op->args.size();
    user_check(t.is_float()) << op->name << " needs a float type, got " << t.str();
    std::vector<llvm::Value*> args;
    for (const ir::Expr& a : op->args) {
      llvm::Value* v = emit(a);
      args.push_back(widens(t) ? half_to_f32(v, a.type()) : v);
    }
    llvm::Type* ty = args[0]->getType();
    llvm::Function* f = llvm::Intrinsic::getDeclaration(&module_, m.id, {ty});
    llvm::Value* r = b_.CreateCall(f, args);
    return widens(t) ? f32_to_half(r, t) : r;
  }
  user_error() << "unknown math function '" << op->name << "' (kiln emits no libm calls); "
               << "known: " << known << ", abs";
  return nullptr;
}

}  // namespace kiln::codegen
