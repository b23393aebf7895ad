#include "compiler/lower/interval.h"

#include "compiler/ir/op.h"
#include "compiler/ir/simplify.h"
#include "compiler/ir/structural.h"
#include "compiler/ir/substitute.h"

namespace kiln::lower {

using ir::Expr;
using ir::ExprKind;

namespace {

bool is_point(const Interval& i) {
  return i.bounded() && (i.min.same_as(i.max) || ir::structural_equal(i.min, i.max));
}
Interval point(const Expr& e) { return {e, e}; }
Expr smin(const Expr& a, const Expr& b) { return ir::simplify(ir::min(a, b)); }
Expr smax(const Expr& a, const Expr& b) { return ir::simplify(ir::max(a, b)); }

Interval eval(const Expr& e, const RelaxMap& relax) {
  if (ir::as_const_int(e)) return point(e);
  if (const auto* v = e.as<ir::VarNode>()) {
    auto it = relax.find(v);
    return it == relax.end() ? point(e) : it->second;
  }
  if (const auto* c = e.as<ir::CastNode>()) {
    Interval i = eval(c->value, relax);
    if (!i.bounded()) return {};
    return {ir::make_cast(e.type(), i.min), ir::make_cast(e.type(), i.max)};
  }
  if (const auto* s = e.as<ir::SelectNode>()) {
    return interval_union(eval(s->true_value, relax), eval(s->false_value, relax));
  }
  if (const auto* l = e.as<ir::LetNode>()) {
    return eval(ir::substitute(l->body, l->var, l->value), relax);
  }
  const auto* op = e.as<ir::BinaryNode>();
  if (!op) return {};  // loads and calls: no bound without knowing their values
  Interval a = eval(op->a, relax), b = eval(op->b, relax);
  if (!a.bounded() || !b.bounded()) return {};
  if (is_point(a) && is_point(b)) return point(ir::simplify(ir::make_binary(op->kind, a.min, b.min)));
  auto cb = ir::as_const_int(ir::simplify(b.min));
  bool b_const = is_point(b) && cb.has_value();
  switch (op->kind) {
    case ExprKind::Add: return {ir::simplify(a.min + b.min), ir::simplify(a.max + b.max)};
    case ExprKind::Sub: return {ir::simplify(a.min - b.max), ir::simplify(a.max - b.min)};
    case ExprKind::Mul: {
      if (b_const) {
        if (*cb >= 0) return {ir::simplify(a.min * b.min), ir::simplify(a.max * b.min)};
        return {ir::simplify(a.max * b.min), ir::simplify(a.min * b.min)};
      }
      auto ca = ir::as_const_int(ir::simplify(a.min));
      if (is_point(a) && ca) return eval(op->b * op->a, relax);
      Expr p[] = {a.min * b.min, a.min * b.max, a.max * b.min, a.max * b.max};
      return {smin(smin(p[0], p[1]), smin(p[2], p[3])), smax(smax(p[0], p[1]), smax(p[2], p[3]))};
    }
    case ExprKind::FloorDiv:
      if (b_const && *cb > 0)
        return {ir::simplify(ir::floordiv(a.min, b.min)), ir::simplify(ir::floordiv(a.max, b.min))};
      return {};
    case ExprKind::FloorMod:
      if (b_const && *cb > 0) return {ir::make_int(e.type(), 0), ir::make_int(e.type(), *cb - 1)};
      return {};
    case ExprKind::Min: return {smin(a.min, b.min), smin(a.max, b.max)};
    case ExprKind::Max: return {smax(a.min, b.min), smax(a.max, b.max)};
    default: return {};
  }
}

}  // namespace

Interval eval_interval(const Expr& e, const RelaxMap& relax) { return eval(e, relax); }

Interval interval_union(const Interval& a, const Interval& b) {
  if (!a.bounded() || !b.bounded()) return {};
  return {smin(a.min, b.min), smax(a.max, b.max)};
}

}  // namespace kiln::lower
