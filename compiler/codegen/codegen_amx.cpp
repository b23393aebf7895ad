// Intel AMX (tile registers) for bf16: the kiln tensor intrinsic "amx_gemm_bf16"
// (schedules/amx_tile.h) expands here into a whole tile GEMM, because an AMX tile is not a
// value kiln's IR can hold: the C tiles live in tile registers across the K loop (LLVM's
// x86_amx values, carried by phis), which kiln's loads and stores could not express.
// LLVM configures the tile registers itself (ldtilecfg from the shapes of the .internal
// intrinsics). Linux hands out the tile data state only on request (arch_prctl
// ARCH_REQ_XCOMP_PERM): the first AMX kernel of a process asks for it, with a raw syscall
// since kernels link against nothing, and fails with status -2 where the OS refuses.
#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/IntrinsicsX86.h>

#include "compiler/base/error.h"
#include "compiler/codegen/codegen_llvm.h"

namespace kiln::codegen {

namespace {

constexpr int64_t kTileRows = 16;      // rows of every tile used here
constexpr int64_t kTileRowBytes = 64;  // bytes per tile row: 16 f32 or 32 bf16
constexpr int64_t kSysArchPrctl = 158;
constexpr int64_t kArchReqXcompPerm = 0x1023;
constexpr int64_t kXfeatureXtiledata = 18;

int64_t constant_arg(const ir::CallNode* op, size_t i, const char* what) {
  const auto* imm = op->args[i].as<ir::IntImmNode>();
  internal_check(imm != nullptr) << "amx_gemm_bf16: " << what << " must be a constant";
  return imm->value;
}

}  // namespace

void CodeGenLLVM::emit_amx_permission() {
  llvm::Type* i32 = b_.getInt32Ty();
  llvm::Type* i64 = b_.getInt64Ty();
  // One flag per module: set once the OS has granted the tile data state to this process.
  llvm::GlobalVariable* granted = module_.getNamedGlobal("kiln.amx_granted");
  if (!granted)
    granted = new llvm::GlobalVariable(module_, i32, false, llvm::GlobalValue::InternalLinkage,
                                       llvm::ConstantInt::get(i32, 0), "kiln.amx_granted");
  llvm::BasicBlock* ask = new_block("amx_ask");
  llvm::BasicBlock* refused = new_block("amx_refused");
  llvm::BasicBlock* ready = new_block("amx_ready");
  llvm::Value* have = b_.CreateLoad(i32, granted);
  b_.CreateCondBr(b_.CreateICmpNE(have, const_i32(0)), ready, ask);

  b_.SetInsertPoint(ask);
  auto* fty = llvm::FunctionType::get(i64, {i64, i64, i64}, false);
  auto* syscall = llvm::InlineAsm::get(
      fty, "syscall", "={rax},{rax},{rdi},{rsi},~{rcx},~{r11},~{memory},~{dirflag},~{fpsr},~{flags}",
      /*hasSideEffects=*/true);
  llvm::Value* r = b_.CreateCall(
      fty, syscall, {const_i64(kSysArchPrctl), const_i64(kArchReqXcompPerm), const_i64(kXfeatureXtiledata)});
  llvm::BasicBlock* grant = new_block("amx_grant");
  b_.CreateCondBr(b_.CreateICmpEQ(r, const_i64(0)), grant, refused);
  b_.SetInsertPoint(grant);
  b_.CreateStore(const_i32(1), granted);
  b_.CreateBr(ready);

  b_.SetInsertPoint(refused);
  emit_return_status(const_i32(-2));  // the OS does not let this process use AMX tiles

  b_.SetInsertPoint(ready);
}

llvm::Value* CodeGenLLVM::emit_amx_gemm_bf16(const ir::CallNode* op) {
  const Target& t = hooks_.target();
  user_check(t.is_x86() && t.has("amx-tile") && t.has("amx-bf16"))
      << "amx_gemm_bf16 needs an x86 target with +amx-tile and +amx-bf16 (Sapphire Rapids or "
         "later); target '"
      << t.name << "' has neither";
  // (c, c_stride, a, a_stride, b, b_stride, n0, n1, n2, a0, a1, a2, b0, b1, b2, row_tiles,
  // col_tiles, zero_c): addresses and row strides in bytes, then the reduction as three
  // nested step loops of n0 x n1 x n2 steps of 32 K values, per loop the bytes A and B
  // advance, the C tiles, and whether C starts at zero (tilezero instead of a load).
  internal_check(op->args.size() == 18) << "amx_gemm_bf16 takes 18 arguments";
  llvm::Value* c = emit(op->args[0]);
  llvm::Value* c_stride = emit(op->args[1]);
  llvm::Value* a = emit(op->args[2]);
  llvm::Value* a_stride = emit(op->args[3]);
  llvm::Value* b = emit(op->args[4]);
  llvm::Value* b_stride = emit(op->args[5]);
  int64_t counts[3];
  for (size_t d = 0; d < 3; ++d) counts[d] = constant_arg(op, 6 + d, "step count");
  llvm::Value *a_step[3], *b_step[3];
  for (size_t d = 0; d < 3; ++d) a_step[d] = emit(op->args[9 + d]), b_step[d] = emit(op->args[12 + d]);
  const int64_t k_steps = counts[0] * counts[1] * counts[2];
  const int64_t mt = constant_arg(op, 15, "row_tiles"), nt = constant_arg(op, 16, "col_tiles");
  const bool zero_c = constant_arg(op, 17, "zero_c") != 0;
  internal_check(k_steps > 0 && mt > 0 && nt > 0 && mt + nt + mt * nt <= 8)
      << "amx_gemm_bf16: " << mt << "x" << nt << " C tiles over " << k_steps
      << " K steps do not fit the 8 tile registers";

  emit_amx_permission();

  llvm::Type* i64 = b_.getInt64Ty();
  llvm::Type* amx = llvm::Type::getX86_AMXTy(ctx_);
  llvm::Value* rows = b_.getInt16(kTileRows);
  llvm::Value* cols = b_.getInt16(kTileRowBytes);
  auto at = [&](llvm::Value* base, llvm::Value* offset) {
    return b_.CreateGEP(b_.getInt8Ty(), base, offset);
  };
  auto load_tile = [&](llvm::Value* p, llvm::Value* stride) {
    return b_.CreateIntrinsic(llvm::Intrinsic::x86_tileloadd64_internal, {},
                              {rows, cols, p, stride});
  };
  // C tile (p, q): rows 16p.., bytes 64q.. of C.
  auto c_tile = [&](int64_t p, int64_t q) {
    return at(c, b_.CreateAdd(b_.CreateMul(c_stride, const_i64(p * kTileRows)),
                              const_i64(q * kTileRowBytes)));
  };
  std::vector<llvm::Value*> acc;
  for (int64_t p = 0; p < mt; ++p)
    for (int64_t q = 0; q < nt; ++q)
      acc.push_back(zero_c ? b_.CreateIntrinsic(llvm::Intrinsic::x86_tilezero_internal, {},
                                                {rows, cols})
                           : load_tile(c_tile(p, q), c_stride));

  // for (k = 0; k < k_steps; ++k): mt A tiles, nt B tiles, mt*nt tdpbf16ps.
  llvm::BasicBlock* pre = b_.GetInsertBlock();
  llvm::BasicBlock* body = new_block("amx_k");
  llvm::BasicBlock* done = new_block("amx_k_done");
  b_.CreateBr(body);
  b_.SetInsertPoint(body);
  llvm::PHINode* k = b_.CreatePHI(i64, 2, "amx.k");
  k->addIncoming(const_i64(0), pre);
  std::vector<llvm::PHINode*> phis;
  for (llvm::Value* v : acc) {
    phis.push_back(b_.CreatePHI(amx, 2, "amx.c"));
    phis.back()->addIncoming(v, pre);
  }
  // Step k is (i0, i1, i2) of the three loops; one flat loop, the divisions are by
  // constants and cost nothing beside the tile instructions.
  llvm::Value* i2 = b_.CreateURem(k, const_i64(counts[2]));
  llvm::Value* i1 = b_.CreateURem(b_.CreateUDiv(k, const_i64(counts[2])), const_i64(counts[1]));
  llvm::Value* i0 = b_.CreateUDiv(k, const_i64(counts[1] * counts[2]));
  auto step_offset = [&](llvm::Value* const* stride) {
    return b_.CreateAdd(b_.CreateAdd(b_.CreateMul(i0, stride[0]), b_.CreateMul(i1, stride[1])),
                        b_.CreateMul(i2, stride[2]));
  };
  llvm::Value* a_k = at(a, step_offset(a_step));
  llvm::Value* b_k = at(b, step_offset(b_step));
  std::vector<llvm::Value*> at_tiles, bt_tiles;
  for (int64_t p = 0; p < mt; ++p)
    at_tiles.push_back(
        load_tile(at(a_k, b_.CreateMul(a_stride, const_i64(p * kTileRows))), a_stride));
  for (int64_t q = 0; q < nt; ++q)
    bt_tiles.push_back(load_tile(at(b_k, const_i64(q * kTileRowBytes)), b_stride));
  std::vector<llvm::Value*> next;
  for (int64_t p = 0; p < mt; ++p)
    for (int64_t q = 0; q < nt; ++q)
      next.push_back(b_.CreateIntrinsic(llvm::Intrinsic::x86_tdpbf16ps_internal, {},
                                        {rows, cols, cols, phis[p * nt + q], at_tiles[p],
                                         bt_tiles[q]}));
  llvm::Value* k_next = b_.CreateAdd(k, const_i64(1));
  llvm::BasicBlock* latch = b_.GetInsertBlock();
  k->addIncoming(k_next, latch);
  for (size_t i = 0; i < phis.size(); ++i) phis[i]->addIncoming(next[i], latch);
  b_.CreateCondBr(b_.CreateICmpEQ(k_next, const_i64(k_steps)), done, body);

  b_.SetInsertPoint(done);
  for (int64_t p = 0; p < mt; ++p)
    for (int64_t q = 0; q < nt; ++q)
      b_.CreateIntrinsic(llvm::Intrinsic::x86_tilestored64_internal, {},
                         {rows, cols, c_tile(p, q), c_stride, next[p * nt + q]});
  return const_i32(0);
}

}  // namespace kiln::codegen
