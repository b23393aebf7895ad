#include "ir/functor.h"

#include "ir/error.h"
#include "ir/op.h"

namespace kiln::ir {

void IRVisitor::visit(const Expr& e) {
  if (!e.defined()) return;
  switch (e.kind()) {
    case ExprKind::IntImm: return visit(e.as<IntImmNode>());
    case ExprKind::FloatImm: return visit(e.as<FloatImmNode>());
    case ExprKind::StringImm: return visit(e.as<StringImmNode>());
    case ExprKind::Var: return visit(e.as<VarNode>());
    case ExprKind::Not: return visit(e.as<NotNode>());
    case ExprKind::Select: return visit(e.as<SelectNode>());
    case ExprKind::Cast: return visit(e.as<CastNode>());
    case ExprKind::Load: return visit(e.as<LoadNode>());
    case ExprKind::Ramp: return visit(e.as<RampNode>());
    case ExprKind::Broadcast: return visit(e.as<BroadcastNode>());
    case ExprKind::Call: return visit(e.as<CallNode>());
    case ExprKind::Let: return visit(e.as<LetNode>());
    case ExprKind::Reduce: return visit(e.as<ReduceNode>());
    default: return visit(e.as<BinaryNode>());
  }
}

void IRVisitor::visit(const Stmt& s) {
  if (!s.defined()) return;
  switch (s.kind()) {
    case StmtKind::LetStmt: return visit(s.as<LetStmtNode>());
    case StmtKind::Store: return visit(s.as<StoreNode>());
    case StmtKind::For: return visit(s.as<ForNode>());
    case StmtKind::Allocate: return visit(s.as<AllocateNode>());
    case StmtKind::Seq: return visit(s.as<SeqNode>());
    case StmtKind::IfThenElse: return visit(s.as<IfThenElseNode>());
    case StmtKind::Evaluate: return visit(s.as<EvaluateNode>());
  }
}

void IRVisitor::visit(const BinaryNode* op) { visit(op->a), visit(op->b); }
void IRVisitor::visit(const NotNode* op) { visit(op->a); }
void IRVisitor::visit(const SelectNode* op) {
  visit(op->condition), visit(op->true_value), visit(op->false_value);
}
void IRVisitor::visit(const CastNode* op) { visit(op->value); }
void IRVisitor::visit(const LoadNode* op) {
  for (const Expr& i : op->indices) visit(i);
  visit(op->predicate);
}
void IRVisitor::visit(const RampNode* op) { visit(op->base), visit(op->stride); }
void IRVisitor::visit(const BroadcastNode* op) { visit(op->value); }
void IRVisitor::visit(const CallNode* op) {
  for (const Expr& a : op->args) visit(a);
}
void IRVisitor::visit(const LetNode* op) { visit(op->value), visit(op->body); }
void IRVisitor::visit(const ReduceNode* op) { visit(op->source); }

void IRVisitor::visit(const LetStmtNode* op) { visit(op->value), visit(op->body); }
void IRVisitor::visit(const StoreNode* op) {
  visit(op->value);
  for (const Expr& i : op->indices) visit(i);
  visit(op->predicate);
}
void IRVisitor::visit(const ForNode* op) { visit(op->min), visit(op->extent), visit(op->body); }
void IRVisitor::visit(const AllocateNode* op) { visit(op->body); }
void IRVisitor::visit(const SeqNode* op) {
  for (const Stmt& s : op->stmts) visit(s);
}
void IRVisitor::visit(const IfThenElseNode* op) {
  visit(op->condition), visit(op->then_case), visit(op->else_case);
}
void IRVisitor::visit(const EvaluateNode* op) { visit(op->value); }

Expr IRMutator::mutate(const Expr& e) {
  if (!e.defined()) return e;
  switch (e.kind()) {
    case ExprKind::IntImm: return mutate(e.as<IntImmNode>(), e);
    case ExprKind::FloatImm: return mutate(e.as<FloatImmNode>(), e);
    case ExprKind::StringImm: return mutate(e.as<StringImmNode>(), e);
    case ExprKind::Var: return mutate(e.as<VarNode>(), e);
    case ExprKind::Not: return mutate(e.as<NotNode>(), e);
    case ExprKind::Select: return mutate(e.as<SelectNode>(), e);
    case ExprKind::Cast: return mutate(e.as<CastNode>(), e);
    case ExprKind::Load: return mutate(e.as<LoadNode>(), e);
    case ExprKind::Ramp: return mutate(e.as<RampNode>(), e);
    case ExprKind::Broadcast: return mutate(e.as<BroadcastNode>(), e);
    case ExprKind::Call: return mutate(e.as<CallNode>(), e);
    case ExprKind::Let: return mutate(e.as<LetNode>(), e);
    case ExprKind::Reduce: return mutate(e.as<ReduceNode>(), e);
    default: return mutate(e.as<BinaryNode>(), e);
  }
}

Stmt IRMutator::mutate(const Stmt& s) {
  if (!s.defined()) return s;
  switch (s.kind()) {
    case StmtKind::LetStmt: return mutate(s.as<LetStmtNode>(), s);
    case StmtKind::Store: return mutate(s.as<StoreNode>(), s);
    case StmtKind::For: return mutate(s.as<ForNode>(), s);
    case StmtKind::Allocate: return mutate(s.as<AllocateNode>(), s);
    case StmtKind::Seq: return mutate(s.as<SeqNode>(), s);
    case StmtKind::IfThenElse: return mutate(s.as<IfThenElseNode>(), s);
    case StmtKind::Evaluate: return mutate(s.as<EvaluateNode>(), s);
  }
  return s;
}

bool IRMutator::mutate_all(const std::vector<Expr>& in, std::vector<Expr>& out) {
  bool changed = false;
  out.clear();
  for (const Expr& e : in) {
    out.push_back(mutate(e));
    changed |= !out.back().same_as(e);
  }
  return changed;
}

Expr IRMutator::mutate(const BinaryNode* op, const Expr& self) {
  Expr a = mutate(op->a), b = mutate(op->b);
  if (a.same_as(op->a) && b.same_as(op->b)) return self;
  return make_binary(op->kind, a, b);
}
Expr IRMutator::mutate(const NotNode* op, const Expr& self) {
  Expr a = mutate(op->a);
  return a.same_as(op->a) ? self : make_not(a);
}
Expr IRMutator::mutate(const SelectNode* op, const Expr& self) {
  Expr c = mutate(op->condition), t = mutate(op->true_value), f = mutate(op->false_value);
  if (c.same_as(op->condition) && t.same_as(op->true_value) && f.same_as(op->false_value))
    return self;
  return make_select(c, t, f);
}
Expr IRMutator::mutate(const CastNode* op, const Expr& self) {
  Expr v = mutate(op->value);
  return v.same_as(op->value) ? self : make_cast(op->type, v);
}
Expr IRMutator::mutate(const LoadNode* op, const Expr& self) {
  std::vector<Expr> idx;
  bool changed = mutate_all(op->indices, idx);
  Expr p = mutate(op->predicate);
  if (!changed && p.same_as(op->predicate)) return self;
  return make_load(op->buffer, idx, p);
}
Expr IRMutator::mutate(const RampNode* op, const Expr& self) {
  Expr b = mutate(op->base), s = mutate(op->stride);
  if (b.same_as(op->base) && s.same_as(op->stride)) return self;
  return make_ramp(b, s, op->lanes);
}
Expr IRMutator::mutate(const BroadcastNode* op, const Expr& self) {
  Expr v = mutate(op->value);
  return v.same_as(op->value) ? self : make_broadcast(v, op->lanes);
}
Expr IRMutator::mutate(const CallNode* op, const Expr& self) {
  std::vector<Expr> args;
  if (!mutate_all(op->args, args)) return self;
  return make_call(op->type, op->name, args, op->call_kind);
}
Expr IRMutator::mutate(const LetNode* op, const Expr& self) {
  Expr v = mutate(op->value), b = mutate(op->body);
  if (v.same_as(op->value) && b.same_as(op->body)) return self;
  return make_let(op->var, v, b);
}
Expr IRMutator::mutate(const ReduceNode* op, const Expr& self) {
  Expr s = mutate(op->source);
  return s.same_as(op->source) ? self : make_reduce(op->op, s, op->axes);
}

Stmt IRMutator::mutate(const LetStmtNode* op, const Stmt& self) {
  Expr v = mutate(op->value);
  Stmt b = mutate(op->body);
  if (v.same_as(op->value) && b.same_as(op->body)) return self;
  return make_let_stmt(op->var, v, b);
}
Stmt IRMutator::mutate(const StoreNode* op, const Stmt& self) {
  Expr v = mutate(op->value);
  std::vector<Expr> idx;
  bool changed = mutate_all(op->indices, idx);
  Expr p = mutate(op->predicate);
  if (!changed && v.same_as(op->value) && p.same_as(op->predicate)) return self;
  return make_store(op->buffer, v, idx, p);
}
Stmt IRMutator::mutate(const ForNode* op, const Stmt& self) {
  Expr mn = mutate(op->min), ext = mutate(op->extent);
  Stmt b = mutate(op->body);
  if (mn.same_as(op->min) && ext.same_as(op->extent) && b.same_as(op->body)) return self;
  if (!b.defined()) return Stmt();
  return make_for(op->var, mn, ext, op->for_kind, b, op->annotations);
}
Stmt IRMutator::mutate(const AllocateNode* op, const Stmt& self) {
  Stmt b = mutate(op->body);
  if (b.same_as(op->body)) return self;
  return make_allocate(op->buffer, b);
}
Stmt IRMutator::mutate(const SeqNode* op, const Stmt& self) {
  std::vector<Stmt> out;
  bool changed = false;
  for (const Stmt& s : op->stmts) {
    out.push_back(mutate(s));
    changed |= !out.back().same_as(s);
  }
  return changed ? make_seq(out) : self;
}
Stmt IRMutator::mutate(const IfThenElseNode* op, const Stmt& self) {
  Expr c = mutate(op->condition);
  Stmt t = mutate(op->then_case), e = mutate(op->else_case);
  if (c.same_as(op->condition) && t.same_as(op->then_case) && e.same_as(op->else_case))
    return self;
  if (!t.defined() && !e.defined()) return Stmt();
  if (!t.defined()) return make_if(make_not(c), e);
  return make_if(c, t, e);
}
Stmt IRMutator::mutate(const EvaluateNode* op, const Stmt& self) {
  Expr v = mutate(op->value);
  return v.same_as(op->value) ? self : make_evaluate(v);
}

namespace {
class ExprCallback : public IRVisitor {
 public:
  explicit ExprCallback(const std::function<void(const Expr&)>& f) : f_(f) {}
  using IRVisitor::visit;
  void visit(const Expr& e) override {
    if (!e.defined()) return;
    f_(e);
    IRVisitor::visit(e);
  }

 private:
  const std::function<void(const Expr&)>& f_;
};
}  // namespace

void for_each_expr(const Stmt& s, const std::function<void(const Expr&)>& f) {
  ExprCallback v(f);
  v.visit(s);
}
void for_each_expr(const Expr& e, const std::function<void(const Expr&)>& f) {
  ExprCallback v(f);
  v.visit(e);
}

}  // namespace kiln::ir
