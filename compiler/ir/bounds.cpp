#include "compiler/ir/bounds.h"

#include <algorithm>

#include "compiler/ir/op.h"

namespace kiln::ir {

namespace {

using I = IntBound;

// Saturating arithmetic: anything touching infinity stays infinite.
int64_t sat(__int128 v) {
  if (v <= I::kNegInf) return I::kNegInf;
  if (v >= I::kPosInf) return I::kPosInf;
  return static_cast<int64_t>(v);
}
bool inf(int64_t v) { return v == I::kNegInf || v == I::kPosInf; }
int64_t add(int64_t a, int64_t b) {
  if (inf(a)) return a;
  if (inf(b)) return b;
  return sat(static_cast<__int128>(a) + b);
}
int64_t neg(int64_t a) {
  if (a == I::kNegInf) return I::kPosInf;
  if (a == I::kPosInf) return I::kNegInf;
  return -a;
}
int64_t mul(int64_t a, int64_t b) {
  if (a == 0 || b == 0) return 0;
  if (inf(a) || inf(b)) return ((a < 0) != (b < 0)) ? I::kNegInf : I::kPosInf;
  return sat(static_cast<__int128>(a) * b);
}
int64_t fdiv(int64_t a, int64_t c) {  // c > 0
  if (inf(a)) return a;
  int64_t q = a / c;
  return (a % c != 0 && a < 0) ? q - 1 : q;
}

IntBound bound_of(const Expr& e, const BoundMap& vars) {
  switch (e.kind()) {
    case ExprKind::IntImm: return I::single(e.as<IntImmNode>()->value);
    case ExprKind::Var: {
      auto it = vars.find(e.as<VarNode>());
      return it == vars.end() ? I::everything() : it->second;
    }
    case ExprKind::Broadcast: return bound_of(e.as<BroadcastNode>()->value, vars);
    case ExprKind::Ramp: {
      auto* r = e.as<RampNode>();
      IntBound b = bound_of(r->base, vars), s = bound_of(r->stride, vars);
      IntBound last{mul(s.min, r->lanes - 1), mul(s.max, r->lanes - 1)};
      if (last.min > last.max) std::swap(last.min, last.max);
      return {add(b.min, std::min<int64_t>(0, last.min)), add(b.max, std::max<int64_t>(0, last.max))};
    }
    case ExprKind::Cast: {
      auto* c = e.as<CastNode>();
      if (c->value.type().is_integer() || c->value.type().is_bool()) return bound_of(c->value, vars);
      return I::everything();
    }
    case ExprKind::Select: {
      auto* s = e.as<SelectNode>();
      IntBound t = bound_of(s->true_value, vars), f = bound_of(s->false_value, vars);
      return {std::min(t.min, f.min), std::max(t.max, f.max)};
    }
    case ExprKind::Let: return bound_of(e.as<LetNode>()->body, vars);
    case ExprKind::Not: return {0, 1};
    default: break;
  }
  const auto* op = e.as<BinaryNode>();
  if (!op) return I::everything();
  if (e.type().is_bool()) return {0, 1};
  IntBound a = bound_of(op->a, vars), b = bound_of(op->b, vars);
  switch (op->kind) {
    case ExprKind::Add: return {add(a.min, b.min), add(a.max, b.max)};
    case ExprKind::Sub: return {add(a.min, neg(b.max)), add(a.max, neg(b.min))};
    case ExprKind::Mul: {
      int64_t c[] = {mul(a.min, b.min), mul(a.min, b.max), mul(a.max, b.min), mul(a.max, b.max)};
      return {*std::min_element(c, c + 4), *std::max_element(c, c + 4)};
    }
    case ExprKind::Min: return {std::min(a.min, b.min), std::min(a.max, b.max)};
    case ExprKind::Max: return {std::max(a.min, b.min), std::max(a.max, b.max)};
    case ExprKind::FloorDiv:
      if (b.is_single() && b.min > 0) return {fdiv(a.min, b.min), fdiv(a.max, b.min)};
      return I::everything();
    case ExprKind::FloorMod:
      if (b.is_single() && b.min > 0) {
        if (a.min >= 0 && a.max < b.min) return a;
        return {0, b.min - 1};
      }
      return I::everything();
    case ExprKind::Div:
      if (b.is_single() && b.min > 0 && a.min >= 0) return {a.min / b.min, inf(a.max) ? a.max : a.max / b.min};
      return I::everything();
    case ExprKind::Mod:
      if (b.is_single() && b.min > 0 && a.min >= 0) return {0, std::min(a.max, b.min - 1)};
      return I::everything();
    default: return I::everything();
  }
}

}  // namespace

IntBound const_int_bound(const Expr& e, const BoundMap& vars) {
  if (!e.defined() || e.type().is_float() || e.type().is_handle()) return I::everything();
  return bound_of(e, vars);
}

}  // namespace kiln::ir
