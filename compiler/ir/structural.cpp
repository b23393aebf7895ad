#include "ir/structural.h"

#include <functional>

namespace kiln::ir {

namespace {

bool eq_all(const std::vector<Expr>& a, const std::vector<Expr>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!structural_equal(a[i], b[i])) return false;
  return true;
}

size_t combine(size_t h, size_t v) { return h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2)); }

}  // namespace

bool structural_equal(const Expr& a, const Expr& b) {
  if (a.same_as(b)) return true;
  if (!a.defined() || !b.defined()) return false;
  if (a.kind() != b.kind() || a.type() != b.type()) return false;
  switch (a.kind()) {
    case ExprKind::IntImm: return a.as<IntImmNode>()->value == b.as<IntImmNode>()->value;
    case ExprKind::FloatImm: return a.as<FloatImmNode>()->value == b.as<FloatImmNode>()->value;
    case ExprKind::StringImm:
      return a.as<StringImmNode>()->value == b.as<StringImmNode>()->value;
    case ExprKind::Var: return false;  // distinct variables (same_as checked above)
    case ExprKind::Not: return structural_equal(a.as<NotNode>()->a, b.as<NotNode>()->a);
    case ExprKind::Select: {
      auto *x = a.as<SelectNode>(), *y = b.as<SelectNode>();
      return structural_equal(x->condition, y->condition) &&
             structural_equal(x->true_value, y->true_value) &&
             structural_equal(x->false_value, y->false_value);
    }
    case ExprKind::Cast: return structural_equal(a.as<CastNode>()->value, b.as<CastNode>()->value);
    case ExprKind::Load: {
      auto *x = a.as<LoadNode>(), *y = b.as<LoadNode>();
      return x->buffer == y->buffer && eq_all(x->indices, y->indices) &&
             x->predicate.defined() == y->predicate.defined() &&
             (!x->predicate.defined() || structural_equal(x->predicate, y->predicate));
    }
    case ExprKind::Ramp: {
      auto *x = a.as<RampNode>(), *y = b.as<RampNode>();
      return structural_equal(x->base, y->base) && structural_equal(x->stride, y->stride);
    }
    case ExprKind::Broadcast:
      return structural_equal(a.as<BroadcastNode>()->value, b.as<BroadcastNode>()->value);
    case ExprKind::Call: {
      auto *x = a.as<CallNode>(), *y = b.as<CallNode>();
      return x->name == y->name && x->call_kind == y->call_kind && eq_all(x->args, y->args);
    }
    case ExprKind::Let: {
      auto *x = a.as<LetNode>(), *y = b.as<LetNode>();
      return x->var.same_as(y->var) && structural_equal(x->value, y->value) &&
             structural_equal(x->body, y->body);
    }
    case ExprKind::Reduce: {
      auto *x = a.as<ReduceNode>(), *y = b.as<ReduceNode>();
      return x->op == y->op && x->axes == y->axes && structural_equal(x->source, y->source);
    }
    default: {
      auto *x = a.as<BinaryNode>(), *y = b.as<BinaryNode>();
      return structural_equal(x->a, y->a) && structural_equal(x->b, y->b);
    }
  }
}

bool structural_equal(const Stmt& a, const Stmt& b) {
  if (a.same_as(b)) return true;
  if (!a.defined() || !b.defined() || a.kind() != b.kind()) return false;
  auto eq = [](const Expr& x, const Expr& y) {
    return x.defined() == y.defined() && (!x.defined() || structural_equal(x, y));
  };
  switch (a.kind()) {
    case StmtKind::LetStmt: {
      auto *x = a.as<LetStmtNode>(), *y = b.as<LetStmtNode>();
      return x->var.same_as(y->var) && eq(x->value, y->value) && structural_equal(x->body, y->body);
    }
    case StmtKind::Store: {
      auto *x = a.as<StoreNode>(), *y = b.as<StoreNode>();
      return x->buffer == y->buffer && eq(x->value, y->value) && eq_all(x->indices, y->indices) &&
             eq(x->predicate, y->predicate);
    }
    case StmtKind::For: {
      auto *x = a.as<ForNode>(), *y = b.as<ForNode>();
      return x->var.same_as(y->var) && eq(x->min, y->min) && eq(x->extent, y->extent) &&
             x->for_kind == y->for_kind && structural_equal(x->body, y->body);
    }
    case StmtKind::Allocate: {
      auto *x = a.as<AllocateNode>(), *y = b.as<AllocateNode>();
      return x->buffer == y->buffer && structural_equal(x->body, y->body);
    }
    case StmtKind::Seq: {
      auto *x = a.as<SeqNode>(), *y = b.as<SeqNode>();
      if (x->stmts.size() != y->stmts.size()) return false;
      for (size_t i = 0; i < x->stmts.size(); ++i)
        if (!structural_equal(x->stmts[i], y->stmts[i])) return false;
      return true;
    }
    case StmtKind::IfThenElse: {
      auto *x = a.as<IfThenElseNode>(), *y = b.as<IfThenElseNode>();
      return eq(x->condition, y->condition) && structural_equal(x->then_case, y->then_case) &&
             (x->else_case.defined() == y->else_case.defined()) &&
             (!x->else_case.defined() || structural_equal(x->else_case, y->else_case));
    }
    case StmtKind::Evaluate: return eq(a.as<EvaluateNode>()->value, b.as<EvaluateNode>()->value);
  }
  return false;
}

size_t structural_hash(const Expr& e) {
  if (!e.defined()) return 0;
  size_t h = combine(static_cast<size_t>(e.kind()), std::hash<std::string>()(e.type().str()));
  switch (e.kind()) {
    case ExprKind::IntImm: return combine(h, std::hash<int64_t>()(e.as<IntImmNode>()->value));
    case ExprKind::FloatImm: return combine(h, std::hash<double>()(e.as<FloatImmNode>()->value));
    case ExprKind::StringImm:
      return combine(h, std::hash<std::string>()(e.as<StringImmNode>()->value));
    case ExprKind::Var: return combine(h, std::hash<const void*>()(e.get()));
    case ExprKind::Load: {
      auto* x = e.as<LoadNode>();
      h = combine(h, std::hash<const void*>()(x->buffer.get()));
      for (const Expr& i : x->indices) h = combine(h, structural_hash(i));
      return h;
    }
    case ExprKind::Call: {
      auto* x = e.as<CallNode>();
      h = combine(h, std::hash<std::string>()(x->name));
      for (const Expr& i : x->args) h = combine(h, structural_hash(i));
      return h;
    }
    case ExprKind::Not: return combine(h, structural_hash(e.as<NotNode>()->a));
    case ExprKind::Cast: return combine(h, structural_hash(e.as<CastNode>()->value));
    case ExprKind::Broadcast: return combine(h, structural_hash(e.as<BroadcastNode>()->value));
    case ExprKind::Ramp:
      return combine(combine(h, structural_hash(e.as<RampNode>()->base)),
                     structural_hash(e.as<RampNode>()->stride));
    case ExprKind::Select: {
      auto* x = e.as<SelectNode>();
      h = combine(h, structural_hash(x->condition));
      return combine(combine(h, structural_hash(x->true_value)), structural_hash(x->false_value));
    }
    case ExprKind::Let: return combine(h, structural_hash(e.as<LetNode>()->body));
    case ExprKind::Reduce: return combine(h, structural_hash(e.as<ReduceNode>()->source));
    default: {
      auto* x = e.as<BinaryNode>();
      return combine(combine(h, structural_hash(x->a)), structural_hash(x->b));
    }
  }
}

}  // namespace kiln::ir
