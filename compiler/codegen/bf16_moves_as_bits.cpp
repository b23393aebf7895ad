#include "compiler/codegen/bf16_moves_as_bits.h"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>

#include <vector>

namespace kiln::codegen {
namespace {

bool is_bf16(llvm::Type* t) {
  return t->getScalarType()->isBFloatTy();
}

// i16, or <N x i16>, for a bfloat type.
llvm::Type* bits_type(llvm::Type* t) {
  llvm::Type* i16 = llvm::Type::getInt16Ty(t->getContext());
  if (auto* v = llvm::dyn_cast<llvm::VectorType>(t)) return llvm::VectorType::get(i16, v);
  return i16;
}

void rewrite_phi(llvm::PHINode* phi) {
  llvm::Type* bits = bits_type(phi->getType());
  llvm::PHINode* int_phi =
      llvm::PHINode::Create(bits, phi->getNumIncomingValues(), phi->getName() + ".bits", phi);
  for (unsigned i = 0; i < phi->getNumIncomingValues(); ++i) {
    // The bitcast goes at the end of the incoming block, where the value is available.
    llvm::IRBuilder<> b(phi->getIncomingBlock(i)->getTerminator());
    int_phi->addIncoming(b.CreateBitCast(phi->getIncomingValue(i), bits), phi->getIncomingBlock(i));
  }
  llvm::IRBuilder<> b(phi->getParent(), phi->getParent()->getFirstInsertionPt());
  phi->replaceAllUsesWith(b.CreateBitCast(int_phi, phi->getType()));
  phi->eraseFromParent();
}

void rewrite_select(llvm::SelectInst* s) {
  llvm::IRBuilder<> b(s);
  llvm::Type* bits = bits_type(s->getType());
  llvm::Value* r = b.CreateSelect(s->getCondition(), b.CreateBitCast(s->getTrueValue(), bits),
                                  b.CreateBitCast(s->getFalseValue(), bits));
  s->replaceAllUsesWith(b.CreateBitCast(r, s->getType()));
  s->eraseFromParent();
}

void rewrite_shuffle(llvm::ShuffleVectorInst* s) {
  llvm::IRBuilder<> b(s);
  llvm::Type* bits = bits_type(s->getOperand(0)->getType());
  llvm::Value* r =
      b.CreateShuffleVector(b.CreateBitCast(s->getOperand(0), bits),
                            b.CreateBitCast(s->getOperand(1), bits), s->getShuffleMask());
  s->replaceAllUsesWith(b.CreateBitCast(r, s->getType()));
  s->eraseFromParent();
}

void rewrite_load(llvm::LoadInst* l) {
  llvm::IRBuilder<> b(l);
  llvm::LoadInst* bits = b.CreateAlignedLoad(bits_type(l->getType()), l->getPointerOperand(),
                                             l->getAlign(), l->isVolatile());
  bits->copyMetadata(*l);
  l->replaceAllUsesWith(b.CreateBitCast(bits, l->getType()));
  l->eraseFromParent();
}

void rewrite_store(llvm::StoreInst* st) {
  llvm::IRBuilder<> b(st);
  llvm::Value* v = st->getValueOperand();
  llvm::StoreInst* bits =
      b.CreateAlignedStore(b.CreateBitCast(v, bits_type(v->getType())), st->getPointerOperand(),
                           st->getAlign(), st->isVolatile());
  bits->copyMetadata(*st);
  st->eraseFromParent();
}

llvm::Align alignment_of(llvm::IntrinsicInst* call, unsigned operand) {
  auto* a = llvm::cast<llvm::ConstantInt>(call->getArgOperand(operand));
  return llvm::Align(a->getZExtValue());
}

// llvm.masked.load(ptr, align, mask, passthru) of bfloat lanes, as one of i16 lanes.
void rewrite_masked_load(llvm::IntrinsicInst* call) {
  llvm::IRBuilder<> b(call);
  llvm::Type* bits = bits_type(call->getType());
  llvm::CallInst* load =
      b.CreateMaskedLoad(bits, call->getArgOperand(0), alignment_of(call, 1),
                         call->getArgOperand(2), b.CreateBitCast(call->getArgOperand(3), bits));
  load->copyMetadata(*call);
  call->replaceAllUsesWith(b.CreateBitCast(load, call->getType()));
  call->eraseFromParent();
}

// llvm.masked.store(value, ptr, align, mask) of bfloat lanes, as one of i16 lanes.
void rewrite_masked_store(llvm::IntrinsicInst* call) {
  llvm::IRBuilder<> b(call);
  llvm::Value* value = call->getArgOperand(0);
  llvm::CallInst* store =
      b.CreateMaskedStore(b.CreateBitCast(value, bits_type(value->getType())),
                          call->getArgOperand(1), alignment_of(call, 2), call->getArgOperand(3));
  store->copyMetadata(*call);
  call->eraseFromParent();
}

// bitcast(bitcast(x)) to x's own type is x. The rewrites meet at bfloat values between two
// bitcasts; left there, the AVX2 backend would widen that bfloat vector to f32 and round it back.
void fold_bitcast_pairs(llvm::Module& m) {
  std::vector<llvm::Instruction*> dead;
  for (llvm::Function& f : m)
    for (llvm::BasicBlock& bb : f)
      for (llvm::Instruction& i : bb) {
        auto* outer = llvm::dyn_cast<llvm::BitCastInst>(&i);
        auto* inner = outer ? llvm::dyn_cast<llvm::BitCastInst>(outer->getOperand(0)) : nullptr;
        if (!inner || inner->getSrcTy() != outer->getDestTy()) continue;
        outer->replaceAllUsesWith(inner->getOperand(0));
        dead.push_back(outer);
      }
  for (llvm::Instruction* i : dead) i->eraseFromParent();
  for (llvm::Function& f : m)
    for (llvm::BasicBlock& bb : f)
      for (llvm::Instruction& i : llvm::make_early_inc_range(bb))
        if (llvm::isa<llvm::BitCastInst>(&i) && i.use_empty()) i.eraseFromParent();
}

}  // namespace

int move_bf16_as_bits(llvm::Module& m) {
  std::vector<llvm::PHINode*> phis;
  std::vector<llvm::SelectInst*> selects;
  std::vector<llvm::ShuffleVectorInst*> shuffles;
  std::vector<llvm::LoadInst*> plain_loads;
  std::vector<llvm::StoreInst*> plain_stores;
  std::vector<llvm::IntrinsicInst*> loads, stores;
  for (llvm::Function& f : m)
    for (llvm::BasicBlock& bb : f)
      for (llvm::Instruction& i : bb) {
        auto* call = llvm::dyn_cast<llvm::IntrinsicInst>(&i);
        if (call && call->getIntrinsicID() == llvm::Intrinsic::masked_store &&
            is_bf16(call->getArgOperand(0)->getType()))
          stores.push_back(call);
        if (auto* st = llvm::dyn_cast<llvm::StoreInst>(&i);
            st && is_bf16(st->getValueOperand()->getType()))
          plain_stores.push_back(st);
        if (!is_bf16(i.getType())) continue;
        if (auto* l = llvm::dyn_cast<llvm::LoadInst>(&i)) plain_loads.push_back(l);
        if (auto* p = llvm::dyn_cast<llvm::PHINode>(&i)) phis.push_back(p);
        if (auto* s = llvm::dyn_cast<llvm::SelectInst>(&i)) selects.push_back(s);
        if (auto* s = llvm::dyn_cast<llvm::ShuffleVectorInst>(&i)) shuffles.push_back(s);
        if (call && call->getIntrinsicID() == llvm::Intrinsic::masked_load) loads.push_back(call);
      }
  for (llvm::PHINode* p : phis) rewrite_phi(p);
  for (llvm::SelectInst* s : selects) rewrite_select(s);
  for (llvm::ShuffleVectorInst* s : shuffles) rewrite_shuffle(s);
  for (llvm::LoadInst* l : plain_loads) rewrite_load(l);
  for (llvm::StoreInst* s : plain_stores) rewrite_store(s);
  for (llvm::IntrinsicInst* l : loads) rewrite_masked_load(l);
  for (llvm::IntrinsicInst* s : stores) rewrite_masked_store(s);
  fold_bitcast_pairs(m);
  return static_cast<int>(phis.size() + selects.size() + shuffles.size() + plain_loads.size() +
                          plain_stores.size() + loads.size() + stores.size());
}

}  // namespace kiln::codegen
