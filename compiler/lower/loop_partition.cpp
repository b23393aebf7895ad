#include "compiler/lower/loop_partition.h"

#include <optional>
#include <unordered_set>

#include "compiler/ir/bounds.h"
#include "compiler/ir/functor.h"
#include "compiler/ir/op.h"
#include "compiler/ir/simplify.h"
#include "compiler/ir/structural.h"
#include "compiler/ir/substitute.h"
#include "compiler/lower/interval.h"

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

// Collects the guards in a loop body and the ranges of the loops nested in it: constant
// ones, and every one as a symbolic interval, with each variable the body binds.
class GuardCollector : public ir::IRVisitor {
 public:
  std::vector<Expr> guards;
  ir::BoundMap inner;
  RelaxMap inner_ranges;
  std::unordered_set<const ir::VarNode*> bound_inside;
  using ir::IRVisitor::visit;

 protected:
  void visit(const ir::IfThenElseNode* op) override {
    conjuncts(op->condition, guards);
    ir::IRVisitor::visit(op);
  }
  void visit(const ir::ForNode* op) override {
    auto mn = ir::as_const_int(op->min), ext = ir::as_const_int(op->extent);
    if (mn && ext) inner[op->var.node()] = {*mn, *mn + *ext - 1};
    inner_ranges[op->var.node()] = {op->min, ir::simplify(op->min + op->extent - 1)};
    bound_inside.insert(op->var.node());
    ir::IRVisitor::visit(op);
  }
  void visit(const ir::LetStmtNode* op) override {
    bound_inside.insert(op->var.node());
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

bool uses_any(const Expr& e, const std::vector<ir::Var>& vars) {
  for (const ir::Var& v : vars)
    if (ir::uses_var(e, v.node())) return true;
  return false;
}

// With sizes known only at run time: the iterations (from the loop's min) on which every
// guard `c*v + rest < bound` that names a run-time size holds, as an expression of those
// sizes and the enclosing loops, and the guards it decides. Such a guard's rest must be
// bounded over the loops inside without naming anything bound there.
struct SymbolicMain {
  Expr extent;                // undefined when every guard holds throughout
  std::vector<Expr> decided;  // hold on the main part
  std::vector<Expr> always;   // hold on every iteration
};
std::optional<SymbolicMain> symbolic_main_extent(const ir::ForNode* loop,
                                                 const std::vector<ir::Var>& sizes) {
  GuardCollector gc;
  gc.visit(loop->body);
  SymbolicMain out;
  std::vector<Expr> limits;
  for (const Expr& g : gc.guards) {
    const auto* cmp = g.as<ir::BinaryNode>();
    if (!cmp || (cmp->kind != ExprKind::LT && cmp->kind != ExprKind::LE)) continue;
    if (!cmp->a.type().is_int() || cmp->a.type().is_vector()) continue;
    if (!ir::uses_var(g, loop->var.node()) || !uses_any(g, sizes)) continue;
    Expr diff = ir::simplify(cmp->a - cmp->b + (cmp->kind == ExprKind::LT ? 1 : 0));
    auto lin = split_linear(diff, loop->var);
    if (!lin || lin->first <= 0) continue;
    Expr rest_max = eval_interval(lin->second, gc.inner_ranges).max;
    if (!rest_max.defined() || ir::uses_var(rest_max, loop->var.node())) continue;
    bool names_inner = false;
    for (const ir::VarNode* v : gc.bound_inside) names_inner |= ir::uses_var(rest_max, v);
    if (names_inner) continue;
    // c*v + rest_max <= 0  <=>  v <= floor(-rest_max / c)
    Expr first_bad =
        ir::simplify(ir::floordiv(Expr(0) - rest_max, Expr(lin->first)) + 1 - loop->min);
    // A guard that holds on every iteration (a tile padded to whole tiles) goes from the
    // tail too: left there, a lane-dependent one would keep the tail's vectors scalar.
    if (ir::const_int_bound(ir::simplify(first_bad - loop->extent), {}).min >= 0) {
      out.always.push_back(g);
      continue;
    }
    // Guards of one tile often repeat a limit (each unrolled row tests the same rows).
    bool seen = false;
    for (const Expr& l : limits) seen |= ir::structural_equal(l, first_bad);
    if (!seen) limits.push_back(first_bad);
    out.decided.push_back(g);
  }
  if (out.decided.empty()) return out.always.empty() ? std::nullopt : std::optional(out);
  Expr extent = limits[0];
  for (size_t i = 1; i < limits.size(); ++i) extent = ir::min(extent, limits[i]);
  out.extent = ir::simplify(ir::min(ir::max(extent, Expr(0)), loop->extent));
  return out;
}

// Drops the given conjuncts from every guard: they hold wherever the body runs.
class DropDecidedGuards : public ir::IRMutator {
 public:
  explicit DropDecidedGuards(const std::vector<Expr>& decided) : decided_(decided) {}
  using ir::IRMutator::mutate;

 protected:
  Stmt mutate(const ir::IfThenElseNode* op, const Stmt& self) override {
    Stmt s = ir::IRMutator::mutate(op, self);
    const auto* i = s.as<ir::IfThenElseNode>();
    std::vector<Expr> parts, kept;
    conjuncts(i->condition, parts);
    for (const Expr& c : parts) {
      bool decided = false;
      for (const Expr& d : decided_) decided |= ir::structural_equal(c, d);
      if (!decided) kept.push_back(c);
    }
    if (kept.size() == parts.size()) return s;
    if (kept.empty()) return i->then_case;
    Expr cond = kept[0];
    for (size_t k = 1; k < kept.size(); ++k) cond = cond && kept[k];
    return ir::make_if(cond, i->then_case, i->else_case);
  }

 private:
  const std::vector<Expr>& decided_;
};

class Partitioner : public ir::IRMutator {
 public:
  explicit Partitioner(const std::vector<ir::Var>& sizes) : sizes_(sizes) {}
  using ir::IRMutator::mutate;

 protected:
  Stmt mutate(const ir::ForNode* op, const Stmt& self) override {
    auto mn = ir::as_const_int(op->min), ext = ir::as_const_int(op->extent);
    std::optional<int64_t> main = (mn && ext) ? main_extent(op, *ext) : std::nullopt;
    if (!main) return symbolic_partition(op, self);
    Stmt head = ir::make_for(op->var, op->min, Expr(*main), op->for_kind, op->body, op->annotations);
    Stmt tail = ir::make_for(op->var, Expr(*mn + *main), Expr(*ext - *main), op->for_kind, op->body,
                             op->annotations);
    // Simplifying each part with its own range removes the guards that it decides.
    return ir::make_seq({mutate(ir::simplify(head)), mutate(ir::simplify(tail))});
  }

 private:
  // The same split where a run-time size decides the guard. Vector and unrolled loops keep
  // their guards: they need constant extents, and their guarded copies are the tail's.
  // Only the parts' bodies are partitioned further: the tail's guards would give it a main
  // part of (symbolically) zero iterations, again and again.
  Stmt symbolic_partition(const ir::ForNode* op, const Stmt& self) {
    bool splittable = op->for_kind == ir::ForKind::Serial || op->for_kind == ir::ForKind::Parallel;
    std::optional<SymbolicMain> main =
        sizes_.empty() || !splittable ? std::nullopt : symbolic_main_extent(op, sizes_);
    if (!main) return ir::IRMutator::mutate(op, self);
    const Stmt body = DropDecidedGuards(main->always).mutate(op->body);
    if (!main->extent.defined())
      return ir::make_for(op->var, op->min, op->extent, op->for_kind, mutate(ir::simplify(body)),
                          op->annotations);
    Stmt head_body = mutate(ir::simplify(DropDecidedGuards(main->decided).mutate(body)));
    Stmt head =
        ir::make_for(op->var, op->min, main->extent, op->for_kind, head_body, op->annotations);
    Stmt tail = ir::make_for(op->var, ir::simplify(op->min + main->extent),
                             ir::simplify(op->extent - main->extent), op->for_kind, mutate(body),
                             op->annotations);
    return ir::make_seq({head, tail});
  }

  const std::vector<ir::Var>& sizes_;
};

}  // namespace

Stmt partition_loops(const Stmt& s, const std::vector<ir::Var>& sizes) {
  // Each split creates loops the next round may split further (a guarded tail becomes a
  // constant iteration whose inner loops can be partitioned in turn).
  return ir::simplify(Partitioner(sizes).mutate(s));
}

}  // namespace kiln::lower
