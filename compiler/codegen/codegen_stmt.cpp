// Statements: sequencing, bindings, conditionals and loops.
#include <llvm/IR/Metadata.h>

#include "compiler/codegen/codegen_llvm.h"
#include "compiler/base/error.h"
#include "compiler/ir/printer.h"

namespace kiln::codegen {

using ir::DataType;
using ir::StmtKind;

llvm::BasicBlock* CodeGenLLVM::new_block(const std::string& name) {
  return llvm::BasicBlock::Create(ctx_, name, fn_.function);
}

void CodeGenLLVM::emit(const ir::Stmt& s) {
  if (!s.defined()) return;
  switch (s.kind()) {
    case StmtKind::LetStmt: {
      const auto* op = s.as<ir::LetStmtNode>();
      llvm::Value* v = emit(op->value);
      if (llvm::isa<llvm::Instruction>(v) && !v->hasName()) v->setName(op->var.name());
      ScopedBinding bind(fn_.vars, op->var.node(), v);
      emit(op->body);
      return;
    }
    case StmtKind::Store:
      return emit_store(s.as<ir::StoreNode>());
    case StmtKind::For:
      return emit_for(s.as<ir::ForNode>());
    case StmtKind::Allocate:
      return emit_allocate(s.as<ir::AllocateNode>());
    case StmtKind::Seq:
      for (const ir::Stmt& c : s.as<ir::SeqNode>()->stmts) emit(c);
      return;
    case StmtKind::IfThenElse:
      return emit_if(s.as<ir::IfThenElseNode>());
    case StmtKind::Evaluate:
      emit(s.as<ir::EvaluateNode>()->value);
      return;
  }
}

void CodeGenLLVM::emit_if(const ir::IfThenElseNode* op) {
  internal_check(op->condition.type() == DataType::boolean())
      << "if condition must be a scalar bool: " << op->condition;
  llvm::Value* cond = emit(op->condition);
  llvm::BasicBlock* then_bb = new_block("then");
  llvm::BasicBlock* end_bb = new_block("endif");
  llvm::BasicBlock* else_bb = op->else_case.defined() ? new_block("else") : end_bb;
  b_.CreateCondBr(cond, then_bb, else_bb);
  b_.SetInsertPoint(then_bb);
  emit(op->then_case);
  b_.CreateBr(end_bb);
  if (op->else_case.defined()) {
    b_.SetInsertPoint(else_bb);
    emit(op->else_case);
    b_.CreateBr(end_bb);
  }
  b_.SetInsertPoint(end_bb);
}

void CodeGenLLVM::emit_for(const ir::ForNode* op) {
  internal_check(op->min.type() == DataType::index() && op->extent.type() == DataType::index())
      << "loop " << op->var.name() << " bounds must be i64";
  if (op->for_kind == ir::ForKind::Parallel && !fn_.in_parallel) return emit_parallel_for(op);
  // Vectorized loops are legalised by lowering; one that slips through is still correct
  // as a plain loop. Nested parallel loops run serially inside their outer task.
  llvm::Value* begin = emit(op->min);
  llvm::Value* end = b_.CreateAdd(begin, emit(op->extent), "", false, true);
  emit_serial_loop(op->var, begin, end, op->for_kind == ir::ForKind::Unrolled, op->body);
}

void CodeGenLLVM::emit_serial_loop(const ir::Var& var, llvm::Value* begin, llvm::Value* end,
                                   bool unroll, const ir::Stmt& body) {
  llvm::BasicBlock* pre = b_.GetInsertBlock();
  llvm::BasicBlock* head = new_block(var.name() + ".head");
  llvm::BasicBlock* body_bb = new_block(var.name() + ".body");
  llvm::BasicBlock* exit = new_block(var.name() + ".exit");
  b_.CreateBr(head);
  b_.SetInsertPoint(head);
  llvm::PHINode* i = b_.CreatePHI(b_.getInt64Ty(), 2, var.name());
  i->addIncoming(begin, pre);
  b_.CreateCondBr(b_.CreateICmpSLT(i, end), body_bb, exit);
  b_.SetInsertPoint(body_bb);
  {
    ScopedBinding bind(fn_.vars, var.node(), i);
    emit(body);
  }
  llvm::Value* next = b_.CreateAdd(i, const_i64(1), var.name() + ".next", true, true);
  llvm::BranchInst* back = b_.CreateBr(head);
  i->addIncoming(next, b_.GetInsertBlock());
  // Loop metadata: mustprogress always (a counted loop ends), full unroll when asked.
  std::vector<llvm::Metadata*> md{nullptr};
  md.push_back(llvm::MDNode::get(ctx_, llvm::MDString::get(ctx_, "llvm.loop.mustprogress")));
  if (unroll)
    md.push_back(llvm::MDNode::get(ctx_, llvm::MDString::get(ctx_, "llvm.loop.unroll.full")));
  llvm::MDNode* loop_id = llvm::MDNode::getDistinct(ctx_, md);
  loop_id->replaceOperandWith(0, loop_id);
  back->setMetadata(llvm::LLVMContext::MD_loop, loop_id);
  b_.SetInsertPoint(exit);
}

}  // namespace kiln::codegen
