// Walking and rewriting the IR.
//
// IRVisitor visits every node in order; override the `visit` overload of the nodes you care
// about and call the base to keep walking into children.
// IRMutator rebuilds the tree bottom-up; an override returns a new node, and the base
// returns the *same* node when no child changed, so unchanged subtrees stay shared.
// Both defaults follow each node's fields() (ir/fields.h), in declaration order.
#pragma once

#include <functional>

#include "compiler/ir/stmt.h"

namespace kiln::ir {

class IRVisitor {
 public:
  virtual ~IRVisitor() = default;
  virtual void visit(const Expr& e);
  virtual void visit(const Stmt& s);

 protected:
  virtual void visit(const IntImmNode*) {}
  virtual void visit(const FloatImmNode*) {}
  virtual void visit(const StringImmNode*) {}
  virtual void visit(const VarNode*) {}
  virtual void visit(const BinaryNode* op);
  virtual void visit(const NotNode* op);
  virtual void visit(const SelectNode* op);
  virtual void visit(const CastNode* op);
  virtual void visit(const LoadNode* op);
  virtual void visit(const RampNode* op);
  virtual void visit(const BroadcastNode* op);
  virtual void visit(const CallNode* op);
  virtual void visit(const LetNode* op);
  virtual void visit(const ReduceNode* op);

  virtual void visit(const LetStmtNode* op);
  virtual void visit(const StoreNode* op);
  virtual void visit(const ForNode* op);
  virtual void visit(const AllocateNode* op);
  virtual void visit(const SeqNode* op);
  virtual void visit(const IfThenElseNode* op);
  virtual void visit(const EvaluateNode* op);
};

class IRMutator {
 public:
  virtual ~IRMutator() = default;
  virtual Expr mutate(const Expr& e);
  virtual Stmt mutate(const Stmt& s);

 protected:
  // `self` is the handle of `op`, returned as it is when nothing changed.
  virtual Expr mutate(const IntImmNode*, const Expr& self) { return self; }
  virtual Expr mutate(const FloatImmNode*, const Expr& self) { return self; }
  virtual Expr mutate(const StringImmNode*, const Expr& self) { return self; }
  virtual Expr mutate(const VarNode*, const Expr& self) { return self; }
  virtual Expr mutate(const BinaryNode* op, const Expr& self);
  virtual Expr mutate(const NotNode* op, const Expr& self);
  virtual Expr mutate(const SelectNode* op, const Expr& self);
  virtual Expr mutate(const CastNode* op, const Expr& self);
  virtual Expr mutate(const LoadNode* op, const Expr& self);
  virtual Expr mutate(const RampNode* op, const Expr& self);
  virtual Expr mutate(const BroadcastNode* op, const Expr& self);
  virtual Expr mutate(const CallNode* op, const Expr& self);
  virtual Expr mutate(const LetNode* op, const Expr& self);
  virtual Expr mutate(const ReduceNode* op, const Expr& self);

  virtual Stmt mutate(const LetStmtNode* op, const Stmt& self);
  virtual Stmt mutate(const StoreNode* op, const Stmt& self);
  virtual Stmt mutate(const ForNode* op, const Stmt& self);
  virtual Stmt mutate(const AllocateNode* op, const Stmt& self);
  virtual Stmt mutate(const SeqNode* op, const Stmt& self);
  virtual Stmt mutate(const IfThenElseNode* op, const Stmt& self);
  virtual Stmt mutate(const EvaluateNode* op, const Stmt& self);

  // Mutates each element; returns true when any changed.
  bool mutate_all(const std::vector<Expr>& in, std::vector<Expr>& out);
};

// Calls `f` on every expression node (pre-order), including those inside statements.
void for_each_expr(const Stmt& s, const std::function<void(const Expr&)>& f);
void for_each_expr(const Expr& e, const std::function<void(const Expr&)>& f);

}  // namespace kiln::ir
