#include "compiler/lower/loop_partition.h"

#include <optional>

#include "compiler/ir/bounds.h"
#include "compiler/ir/functor.h"
#include "compiler/ir/op.h"
#include "compiler/ir/simplify.h"
#include "compiler/ir/substitute.h"

namespace kiln::lower {

using ir::Expr;
using ir::ExprKind;
using ir::Stmt;

namespace {

// Splits a condition into its conjuncts.
void conjuncts(const Expr& c, std::vector<Expr>& out) {
  if (const auto* b = c.as<ir::BinaryNode>(); b && b->kind == ExprKind::And) {
    conjuncts(b->a, out);
    conjuncts(b->b, out);
    return;
  }
  out.push_back(c);
}

// Collects the guards in a loop body and the ranges of the loops nested in it.
class GuardCollector : public ir::IRVisitor {
 public:
  std::vector<Expr> guards;
  ir::BoundMap inner;
  using ir::IRVisitor::visit;

 protected:
  void visit(const ir::IfThenElseNode* op) override {
    conjuncts(op->condition, guards);
    ir::IRVisitor::visit(op);
  }
  void visit(const ir::ForNode* op) override {
    auto mn = ir::as_const_int(op->min), ext = ir::as_const_int(op->extent);
    if (mn && ext) inner[op->var.node()] = {*mn, *mn + *ext - 1};
    ir::IRVisitor::visit(op);
  }
};

// c*v + rest: the coefficient of v in a linear expression and the rest.
std::optional<std::pair<int64_t, Expr>> split_linear(const Expr& e, const ir::Var& var) {
  // The coefficient is e(v=1) - e(v=0); e is linear in v when e(v=2) - e(v=1) equals it
  // and e - c*v no longer uses v.
  const ir::VarNode* v = var.node();
  Expr at0 = ir::simplify(ir::substitute(e, var, Expr(0)));
  Expr at1 = ir::simplify(ir::substitute(e, var, Expr(1)));
  Expr at2 = ir::simplify(ir::substitute(e, var, Expr(2)));
  auto c1 = ir::as_const_int(ir::simplify(at1 - at0));
  auto c2 = ir::as_const_int(ir::simplify(at2 - at1));
  if (!c1 || !c2 || *c1 != *c2) return std::nullopt;
  Expr rest = ir::simplify(e - Expr(var) * *c1);
  if (ir::uses_var(rest, v)) return std::nullopt;
  return std::make_pair(*c1, rest);
}

int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

// The first iteration (from the loop's min) at which some guard may fail, if the guards
// hold on a leading range of iterations.
std::optional<int64_t> main_extent(const ir::ForNode* loop, int64_t extent) {
  GuardCollector gc;
  gc.visit(loop->body);
  std::optional<int64_t> limit;
  for (const Expr& g : gc.guards) {
    const auto* cmp = g.as<ir::BinaryNode>();
    if (!cmp || (cmp->kind != ExprKind::LT && cmp->kind != ExprKind::LE)) continue;
    if (!cmp->a.type().is_int() || cmp->a.type().is_vector()) continue;
    if (!ir::uses_var(g, loop->var.node())) continue;
    // a < b  <=>  a - b + (LE ? 0 : 1) <= 0
    Expr diff = ir::simplify(cmp->a - cmp->b + (cmp->kind == ExprKind::LT ? 1 : 0));
    auto lin = split_linear(diff, loop->var);
    if (!lin || lin->first <= 0) continue;
    ir::IntBound rb = ir::const_int_bound(lin->second, gc.inner);
    if (rb.max == ir::IntBound::kPosInf) continue;
    // c*v + rmax <= 0  <=>  v <= floor(-rmax / c)
    int64_t last_ok = floor_div(-rb.max, lin->first);
    int64_t first_bad = last_ok + 1 - *ir::as_const_int(loop->min);
    limit = limit ? std::min(*limit, first_bad) : first_bad;
  }
  if (!limit || *limit <= 0 || *limit >= extent) return std::nullopt;
  return limit;
}

class Partitioner : public ir::IRMutator {
 public:
  using ir::IRMutator::mutate;

 protected:
  Stmt mutate(const ir::ForNode* op, const Stmt& self) override {
    auto mn = ir::as_const_int(op->min), ext = ir::as_const_int(op->extent);
    std::optional<int64_t> main = (mn && ext) ? main_extent(op, *ext) : std::nullopt;
    if (!main) return ir::IRMutator::mutate(op, self);
    Stmt head = ir::make_for(op->var, op->min, Expr(*main), op->for_kind, op->body, op->annotations);
    Stmt tail = ir::make_for(op->var, Expr(*mn + *main), Expr(*ext - *main), op->for_kind, op->body,
                             op->annotations);
    // Simplifying each part with its own range removes the guards that it decides.
    return ir::make_seq({mutate(ir::simplify(head)), mutate(ir::simplify(tail))});
  }
};

}  // namespace

Stmt partition_loops(const Stmt& s) {
  // Each split creates loops the next round may split further (a guarded tail becomes a
  // constant iteration whose inner loops can be partitioned in turn).
  return ir::simplify(Partitioner().mutate(s));
}

}  // namespace kiln::lower
