#include "compiler/ir/op.h"

#include <cmath>

#include "compiler/base/error.h"

namespace kiln::ir {

namespace {

template <typename N, typename... A>
Expr node(A&&... a) {
  return Expr(std::make_shared<const N>(std::forward<A>(a)...));
}

bool is_literal(const Expr& e) {
  return e.as<IntImmNode>() || e.as<FloatImmNode>() ||
         (e.as<BroadcastNode>() && is_literal(e.as<BroadcastNode>()->value));
}

// Brings two operands to one type: literals adopt the other side's type, scalars are
// broadcast to the other side's lanes.
void match_types(Expr& a, Expr& b, const char* op) {
  if (a.type() == b.type()) return;
  DataType ta = a.type(), tb = b.type();
  if (ta.element() != tb.element()) {
    if (is_literal(b) && !is_literal(a)) {
      b = make_const(ta.element().with_lanes(tb.lanes), *as_const_float(b));
    } else if (is_literal(a) && !is_literal(b)) {
      a = make_const(tb.element().with_lanes(ta.lanes), *as_const_float(a));
    } else if (is_literal(a) && is_literal(b) && ta.is_int() && tb.is_int()) {
      // two integer literals of different widths: widen to the larger
      if (ta.bits < tb.bits) a = make_const(tb.element().with_lanes(ta.lanes), *as_const_int(a));
      else b = make_const(ta.element().with_lanes(tb.lanes), *as_const_int(b));
    }
  }
  ta = a.type(), tb = b.type();
  if (ta.lanes != tb.lanes) {
    if (ta.lanes == 1) a = make_broadcast(a, tb.lanes);
    else if (tb.lanes == 1) b = make_broadcast(b, ta.lanes);
  }
  internal_check(a.type() == b.type())
      << "operands of " << op << " disagree: " << a.type().str() << " vs " << b.type().str();
}

}  // namespace

Expr make_int(DataType t, int64_t v) {
  if (t.is_vector()) return make_broadcast(make_int(t.element(), v), t.lanes);
  if (t.is_float()) return make_float(t, static_cast<double>(v));
  return node<IntImmNode>(t, v);
}

Expr make_float(DataType t, double v) {
  if (t.is_vector()) return make_broadcast(make_float(t.element(), v), t.lanes);
  if (!t.is_float()) return make_int(t, static_cast<int64_t>(v));
  return node<FloatImmNode>(t, v);
}

Expr make_const(DataType t, double v) {
  return t.is_float() ? make_float(t, v) : make_int(t, static_cast<int64_t>(v));
}
Expr make_bool(bool v, int lanes) { return make_int(DataType::boolean(lanes), v ? 1 : 0); }
Expr make_string(const std::string& s) { return node<StringImmNode>(s); }
Expr make_zero(DataType t) { return make_const(t, 0); }

Expr make_binary(ExprKind kind, Expr a, Expr b) {
  internal_check(a.defined() && b.defined()) << "binary operator on an undefined operand";
  match_types(a, b, "binary operator");
  DataType t = a.type();
  if (kind >= ExprKind::EQ && kind <= ExprKind::GE) {
    t = DataType::boolean(t.lanes);
  } else if (kind == ExprKind::And || kind == ExprKind::Or) {
    internal_check(t.is_bool()) << "logical operator needs bool operands, got " << t.str();
  }
  return Expr(std::make_shared<const BinaryNode>(kind, t, std::move(a), std::move(b)));
}

Expr make_not(Expr a) {
  internal_check(a.type().is_bool()) << "! needs a bool, got " << a.type().str();
  return node<NotNode>(std::move(a));
}

Expr make_select(Expr cond, Expr t, Expr f) {
  match_types(t, f, "select");
  internal_check(cond.type().is_bool()) << "select condition must be bool";
  if (cond.type().lanes != t.type().lanes) {
    if (cond.type().is_scalar()) {
      // a scalar condition selects whole vectors
    } else if (t.type().is_scalar()) {
      t = make_broadcast(t, cond.type().lanes), f = make_broadcast(f, cond.type().lanes);
    }
  }
  return node<SelectNode>(std::move(cond), std::move(t), std::move(f));
}

Expr make_cast(DataType t, Expr v) {
  if (v.type() == t) return v;
  if (t.lanes == 1 && v.type().lanes > 1) internal_error() << "cast would drop lanes";
  if (v.type().lanes == 1 && t.lanes > 1) return make_broadcast(make_cast(t.element(), v), t.lanes);
  return node<CastNode>(t, std::move(v));
}

Expr make_ramp(Expr base, Expr stride, int lanes) {
  internal_check(lanes > 1 && base.type().is_scalar()) << "ramp needs a scalar base, lanes > 1";
  match_types(base, stride, "ramp");
  return node<RampNode>(std::move(base), std::move(stride), lanes);
}

Expr make_broadcast(Expr value, int lanes) {
  internal_check(value.type().is_scalar()) << "broadcast of a vector";
  if (lanes == 1) return value;
  return node<BroadcastNode>(std::move(value), lanes);
}

Expr make_load(Buffer buffer, std::vector<Expr> indices, Expr predicate) {
  int lanes = 1;
  for (const Expr& i : indices) {
    internal_check(i.type().is_int()) << "index into " << buffer->name << " is not integer";
    lanes = std::max<int>(lanes, i.type().lanes);
  }
  DataType t = buffer->dtype.with_lanes(lanes);
  return node<LoadNode>(t, std::move(buffer), std::move(indices), std::move(predicate));
}

Expr make_call(DataType t, const std::string& name, std::vector<Expr> args, CallKind kind) {
  return node<CallNode>(t, name, std::move(args), kind);
}

Expr make_in_range(Expr v, Expr lo, Expr hi) {
  user_check(v.defined() && lo.defined() && hi.defined() && v.type().is_scalar() &&
             lo.type() == v.type() && hi.type() == v.type())
      << "in_range takes three scalars of one type";
  const DataType t = v.type();
  return node<CallNode>(t, "in_range", std::vector<Expr>{std::move(v), std::move(lo), std::move(hi)},
                        CallKind::RangeCheck);
}

Expr make_shuffle(Expr a, Expr b, const std::vector<int>& lanes) {
  user_check(a.defined() && b.defined() && a.type() == b.type() && a.type().is_vector())
      << "shuffle takes two vectors of one type, got " << (a.defined() ? a.type().str() : "?")
      << " and " << (b.defined() ? b.type().str() : "?");
  const int n = a.type().lanes;
  user_check(!lanes.empty()) << "shuffle needs at least one lane index";
  std::vector<Expr> args = {std::move(a), std::move(b)};
  for (int l : lanes) {
    user_check(l >= 0 && l < 2 * n) << "shuffle lane index " << l << " is outside [0, " << 2 * n
                                    << ") (two vectors of " << n << " lanes)";
    args.push_back(Expr(int64_t{l}));
  }
  const DataType t = args[0].type().with_lanes(static_cast<int>(lanes.size()));
  return node<CallNode>(t, "shuffle", std::move(args), CallKind::Shuffle);
}

Expr make_let(Var v, Expr value, Expr body) {
  return node<LetNode>(std::move(v), std::move(value), std::move(body));
}

Expr make_reduce(ReduceOp op, Expr source, std::vector<IterVar> axes) {
  return node<ReduceNode>(op, std::move(source), std::move(axes));
}

Expr operator+(Expr a, Expr b) { return make_binary(ExprKind::Add, std::move(a), std::move(b)); }
Expr operator-(Expr a, Expr b) { return make_binary(ExprKind::Sub, std::move(a), std::move(b)); }
Expr operator-(Expr a) { return make_zero(a.type()) - a; }
Expr operator*(Expr a, Expr b) { return make_binary(ExprKind::Mul, std::move(a), std::move(b)); }
Expr operator/(Expr a, Expr b) {
  bool integer = !a.type().is_float() && !b.type().is_float();
  return make_binary(integer ? ExprKind::FloorDiv : ExprKind::Div, std::move(a), std::move(b));
}
Expr operator%(Expr a, Expr b) { return floormod(std::move(a), std::move(b)); }
Expr operator==(Expr a, Expr b) { return make_binary(ExprKind::EQ, std::move(a), std::move(b)); }
Expr operator!=(Expr a, Expr b) { return make_binary(ExprKind::NE, std::move(a), std::move(b)); }
Expr operator<(Expr a, Expr b) { return make_binary(ExprKind::LT, std::move(a), std::move(b)); }
Expr operator<=(Expr a, Expr b) { return make_binary(ExprKind::LE, std::move(a), std::move(b)); }
Expr operator>(Expr a, Expr b) { return make_binary(ExprKind::GT, std::move(a), std::move(b)); }
Expr operator>=(Expr a, Expr b) { return make_binary(ExprKind::GE, std::move(a), std::move(b)); }
Expr operator&&(Expr a, Expr b) { return make_binary(ExprKind::And, std::move(a), std::move(b)); }
Expr operator||(Expr a, Expr b) { return make_binary(ExprKind::Or, std::move(a), std::move(b)); }
Expr operator!(Expr a) { return make_not(std::move(a)); }
Expr min(Expr a, Expr b) { return make_binary(ExprKind::Min, std::move(a), std::move(b)); }
Expr max(Expr a, Expr b) { return make_binary(ExprKind::Max, std::move(a), std::move(b)); }
Expr floordiv(Expr a, Expr b) {
  return make_binary(ExprKind::FloorDiv, std::move(a), std::move(b));
}
Expr floormod(Expr a, Expr b) {
  return make_binary(ExprKind::FloorMod, std::move(a), std::move(b));
}
Expr truncdiv(Expr a, Expr b) { return make_binary(ExprKind::Div, std::move(a), std::move(b)); }
Expr truncmod(Expr a, Expr b) { return make_binary(ExprKind::Mod, std::move(a), std::move(b)); }

std::optional<int64_t> as_const_int(const Expr& e) {
  if (!e.defined()) return std::nullopt;
  if (const auto* i = e.as<IntImmNode>()) return i->value;
  if (const auto* b = e.as<BroadcastNode>()) return as_const_int(b->value);
  return std::nullopt;
}

std::optional<double> as_const_float(const Expr& e) {
  if (!e.defined()) return std::nullopt;
  if (const auto* f = e.as<FloatImmNode>()) return f->value;
  if (const auto* i = e.as<IntImmNode>()) return static_cast<double>(i->value);
  if (const auto* b = e.as<BroadcastNode>()) return as_const_float(b->value);
  return std::nullopt;
}

bool is_const_int(const Expr& e, int64_t v) {
  auto c = as_const_int(e);
  return c && *c == v;
}

}  // namespace kiln::ir
