#include "compiler/codegen/bf16_phis_as_bits.h"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>

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
    int_phi->addIncoming(b.CreateBitCast(phi->getIncomingValue(i), bits),
                         phi->getIncomingBlock(i));
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

}  // namespace

int move_bf16_phis_as_bits(llvm::Module& m) {
  std::vector<llvm::PHINode*> phis;
  std::vector<llvm::SelectInst*> selects;
  for (llvm::Function& f : m)
    for (llvm::BasicBlock& bb : f)
      for (llvm::Instruction& i : bb) {
        if (!is_bf16(i.getType())) continue;
        if (auto* p = llvm::dyn_cast<llvm::PHINode>(&i)) phis.push_back(p);
        if (auto* s = llvm::dyn_cast<llvm::SelectInst>(&i)) selects.push_back(s);
      }
  for (llvm::PHINode* p : phis) rewrite_phi(p);
  for (llvm::SelectInst* s : selects) rewrite_select(s);
  return static_cast<int>(phis.size() + selects.size());
}

}  // namespace kiln::codegen
