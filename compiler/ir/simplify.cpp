#include "compiler/ir/simplify.h"

#include <cmath>
#include <unordered_map>

#include "compiler/ir/functor.h"
#include "compiler/ir/op.h"
#include "compiler/ir/structural.h"
#include "compiler/ir/substitute.h"

namespace kiln::ir {

namespace {

int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
int64_t floor_mod(int64_t a, int64_t b) { return a - floor_div(a, b) * b; }

// A scalar integer expression as Σ coeff·atom + constant, atoms in first-seen order.
// Rebuilding from this form gives the canonical spelling: ((i*64) + j) + 3.
struct LinearForm {
  std::vector<std::pair<Expr, int64_t>> terms;
  int64_t constant = 0;
  DataType type;

  void add_term(const Expr& atom, int64_t coeff) {
    for (auto& [a, c] : terms) {
      if (structural_equal(a, atom)) {
        c += coeff;
        return;
      }
    }
    terms.emplace_back(atom, coeff);
  }
  void add(const LinearForm& o, int64_t scale) {
    for (const auto& [a, c] : o.terms) add_term(a, c * scale);
    constant += o.constant * scale;
  }
  std::optional<int64_t> as_const() const {
    for (const auto& t : terms)
      if (t.second != 0) return std::nullopt;
    return constant;
  }
};

LinearForm to_linear(const Expr& e) {
  LinearForm f;
  f.type = e.type();
  if (auto c = as_const_int(e)) {
    f.constant = *c;
    return f;
  }
  if (const auto* op = e.as<BinaryNode>()) {
    if (op->kind == ExprKind::Add || op->kind == ExprKind::Sub) {
      f.add(to_linear(op->a), 1);
      f.add(to_linear(op->b), op->kind == ExprKind::Add ? 1 : -1);
      return f;
    }
    if (op->kind == ExprKind::Mul) {
      if (auto c = as_const_int(op->b)) {
        f.add(to_linear(op->a), *c);
        return f;
      }
      if (auto c = as_const_int(op->a)) {
        f.add(to_linear(op->b), *c);
        return f;
      }
    }
  }
  f.add_term(e, 1);
  return f;
}

// floordiv(x, c)*c + floormod(x, c) == x: the pattern that fuse-then-split leaves behind.
void merge_div_mod(LinearForm& f) {
  for (auto& [mod_atom, mod_c] : f.terms) {
    const auto* m = mod_atom.as<BinaryNode>();
    if (!m || m->kind != ExprKind::FloorMod || mod_c == 0) continue;
    auto c = as_const_int(m->b);
    if (!c || *c <= 0) continue;
    for (auto& [div_atom, div_c] : f.terms) {
      const auto* d = div_atom.as<BinaryNode>();
      if (!d || d->kind != ExprKind::FloorDiv || !structural_equal(d->a, m->a) ||
          !structural_equal(d->b, m->b) || div_c != mod_c * *c)
        continue;
      Expr x = m->a;
      int64_t k = mod_c;
      div_c = 0, mod_c = 0;
      f.add(to_linear(x), k);
      return merge_div_mod(f);
    }
  }
}

Expr from_linear(const LinearForm& f) {
  Expr out;
  for (const auto& [atom, c] : f.terms) {
    if (c == 0) continue;
    int64_t mag = c < 0 ? -c : c;
    Expr t = mag == 1 ? atom : atom * make_int(f.type, mag);
    if (!out.defined()) {
      out = c == 1 ? atom : atom * make_int(f.type, c);
    } else {
      out = c < 0 ? out - t : out + t;
    }
  }
  if (!out.defined()) return make_int(f.type, f.constant);
  if (f.constant > 0) return out + make_int(f.type, f.constant);
  if (f.constant < 0) return out - make_int(f.type, -f.constant);
  return out;
}

class Simplifier : public IRMutator {
 public:
  explicit Simplifier(BoundMap bounds) : bounds_(std::move(bounds)) {}
  using IRMutator::mutate;

  IntBound bound(const Expr& e) { return const_int_bound(e, bounds_); }

 protected:
  Expr mutate(const BinaryNode* op, const Expr& self) override {
    Expr a = mutate(op->a), b = mutate(op->b);
    if (Expr r = fold(op->kind, a, b); r.defined()) return r;
    if (a.same_as(op->a) && b.same_as(op->b)) return self;
    return make_binary(op->kind, a, b);
  }

  Expr mutate(const NotNode* op, const Expr& self) override {
    Expr a = mutate(op->a);
    if (auto c = as_const_int(a)) return make_bool(*c == 0, a.type().lanes);
    if (const auto* n = a.as<NotNode>()) return n->a;
    return a.same_as(op->a) ? self : make_not(a);
  }

  Expr mutate(const SelectNode* op, const Expr& self) override {
    Expr c = mutate(op->condition);
    Expr t = mutate(op->true_value), f = mutate(op->false_value);
    if (auto v = as_const_int(c)) return *v ? t : f;
    if (structural_equal(t, f)) return t;
    if (c.same_as(op->condition) && t.same_as(op->true_value) && f.same_as(op->false_value))
      return self;
    return make_select(c, t, f);
  }

  Expr mutate(const CastNode* op, const Expr& self) override {
    Expr v = mutate(op->value);
    if (op->type.is_scalar()) {
      if (auto c = as_const_int(v); c && !v.type().is_float()) return make_const(op->type, *c);
      if (auto c = as_const_float(v); c && op->type.is_float() && !op->type.is_bfloat() &&
                                      op->type.bits >= 32)
        return make_float(op->type, *c);
    }
    if (v.type() == op->type) return v;
    return v.same_as(op->value) ? self : make_cast(op->type, v);
  }

  Expr mutate(const LetNode* op, const Expr& self) override {
    Expr v = mutate(op->value);
    if (as_const_int(v) || as_const_float(v) || v.as<VarNode>()) {
      return mutate(substitute(op->body, op->var, v));
    }
    Expr b = mutate(op->body);
    if (!uses_var(b, op->var.node())) return b;
    if (v.same_as(op->value) && b.same_as(op->body)) return self;
    return make_let(op->var, v, b);
  }

  Stmt mutate(const ForNode* op, const Stmt& self) override {
    Expr mn = mutate(op->min), ext = mutate(op->extent);
    auto ce = as_const_int(ext);
    if (ce && *ce <= 0) return Stmt();
    if (ce && *ce == 1 && op->for_kind != ForKind::Vectorized) {
      return mutate(substitute(op->body, op->var, mn));
    }
    IntBound bm = bound(mn), be = bound(ext);
    IntBound range{bm.min, be.max == IntBound::kPosInf || bm.max == IntBound::kPosInf
                               ? IntBound::kPosInf
                               : bm.max + be.max - 1};
    auto saved = bounds_.find(op->var.node()) != bounds_.end();
    bounds_[op->var.node()] = range;
    Stmt body = mutate(op->body);
    if (!saved) bounds_.erase(op->var.node());
    if (!body.defined()) return Stmt();
    if (mn.same_as(op->min) && ext.same_as(op->extent) && body.same_as(op->body)) return self;
    return make_for(op->var, mn, ext, op->for_kind, body, op->annotations);
  }

  Stmt mutate(const IfThenElseNode* op, const Stmt& self) override {
    Expr c = mutate(op->condition);
    if (auto v = as_const_int(c)) return *v ? mutate(op->then_case) : mutate(op->else_case);
    return IRMutator::mutate(op, self);
  }

  Stmt mutate(const LetStmtNode* op, const Stmt& self) override {
    Expr v = mutate(op->value);
    if (as_const_int(v) || as_const_float(v) || v.as<VarNode>()) {
      return mutate(substitute(op->body, op->var, v));
    }
    IntBound b = bound(v);
    bounds_[op->var.node()] = b;
    Stmt body = mutate(op->body);
    bounds_.erase(op->var.node());
    if (!body.defined()) return Stmt();
    if (v.same_as(op->value) && body.same_as(op->body)) return self;
    return make_let_stmt(op->var, v, body);
  }

 private:
  // Returns the simplified form of `a <kind> b` (operands already simplified), or an
  // undefined Expr when nothing better than the plain node is known.
  Expr fold(ExprKind kind, const Expr& a, const Expr& b) {
    DataType t = a.type();
    if (t.is_float() || b.type().is_float()) return fold_float(kind, a, b);
    if (t.is_vector() || b.type().is_vector()) return fold_vector(kind, a, b);
    auto ca = as_const_int(a), cb = as_const_int(b);
    switch (kind) {
      case ExprKind::Add:
      case ExprKind::Sub:
      case ExprKind::Mul: {
        LinearForm f = to_linear(make_binary(kind, a, b));
        merge_div_mod(f);
        return from_linear(f);
      }
      case ExprKind::FloorDiv:
      case ExprKind::FloorMod:
        if (cb && *cb > 0) return fold_div_mod(kind, a, *cb);
        return Expr();
      case ExprKind::Div:
      case ExprKind::Mod:
        if (ca && cb && *cb != 0) return make_int(t, kind == ExprKind::Div ? *ca / *cb : *ca % *cb);
        if (cb && *cb > 0 && bound(a).min >= 0) {
          return fold_div_mod(kind == ExprKind::Div ? ExprKind::FloorDiv : ExprKind::FloorMod, a, *cb);
        }
        return Expr();
      case ExprKind::Min:
      case ExprKind::Max: {
        if (structural_equal(a, b)) return a;
        IntBound d = bound(fold(ExprKind::Sub, a, b));
        bool a_le = d.max <= 0, a_ge = d.min >= 0;
        if (kind == ExprKind::Min && (a_le || a_ge)) return a_le ? a : b;
        if (kind == ExprKind::Max && (a_le || a_ge)) return a_ge ? a : b;
        return Expr();
      }
      case ExprKind::EQ:
      case ExprKind::NE:
      case ExprKind::LT:
      case ExprKind::LE:
      case ExprKind::GT:
      case ExprKind::GE: {
        if (t.is_bool()) break;
        IntBound d = bound(fold(ExprKind::Sub, a, b));
        std::optional<bool> r;
        switch (kind) {
          case ExprKind::EQ: if (d.is_single()) r = d.min == 0; else if (d.min > 0 || d.max < 0) r = false; break;
          case ExprKind::NE: if (d.is_single()) r = d.min != 0; else if (d.min > 0 || d.max < 0) r = true; break;
          case ExprKind::LT: if (d.max < 0) r = true; else if (d.min >= 0) r = false; break;
          case ExprKind::LE: if (d.max <= 0) r = true; else if (d.min > 0) r = false; break;
          case ExprKind::GT: if (d.min > 0) r = true; else if (d.max <= 0) r = false; break;
          case ExprKind::GE: if (d.min >= 0) r = true; else if (d.max < 0) r = false; break;
          default: break;
        }
        if (r) return make_bool(*r);
        return Expr();
      }
      default: break;
    }
    if (kind == ExprKind::And || kind == ExprKind::Or) {
      bool is_and = kind == ExprKind::And;
      if (ca) return (*ca != 0) == is_and ? b : a;
      if (cb) return (*cb != 0) == is_and ? a : b;
      if (structural_equal(a, b)) return a;
    }
    return Expr();
  }

  Expr fold_div_mod(ExprKind kind, const Expr& a, int64_t c) {
    DataType t = a.type();
    if (c == 1) return kind == ExprKind::FloorDiv ? a : make_int(t, 0);
    LinearForm f = to_linear(a);
    LinearForm quotient, rest;
    quotient.type = rest.type = t;
    for (const auto& [atom, k] : f.terms) {
      if (k % c == 0) quotient.add_term(atom, k / c);
      else rest.add_term(atom, k);
    }
    quotient.constant = floor_div(f.constant, c);
    rest.constant = floor_mod(f.constant, c);
    if (auto r = rest.as_const(); r && quotient.terms.empty()) {
      return make_int(t, kind == ExprKind::FloorDiv ? quotient.constant : *r);
    }
    Expr rest_e = from_linear(rest);
    IntBound rb = bound(rest_e);
    bool rest_small = rb.min >= 0 && rb.max < c;
    // Nested division: floordiv(floordiv(x, p), c) = floordiv(x, p*c).
    if (const auto* inner = rest_e.as<BinaryNode>(); inner && quotient.terms.empty() &&
                                                     quotient.constant == 0) {
      auto p = as_const_int(inner->b);
      if (p && *p > 0 && inner->kind == ExprKind::FloorDiv && kind == ExprKind::FloorDiv)
        return floordiv(inner->a, make_int(t, *p * c));
      if (p && *p > 0 && inner->kind == ExprKind::FloorMod && kind == ExprKind::FloorMod &&
          *p % c == 0)
        return floormod(inner->a, make_int(t, c));
    }
    if (kind == ExprKind::FloorMod) {
      if (rest_small) return rest_e;
      return floormod(rest_e, make_int(t, c));
    }
    Expr q = from_linear(quotient);
    if (rest_small) return q;
    if (quotient.terms.empty() && quotient.constant == 0) {
      if (rest_e.same_as(a)) return Expr();
      return floordiv(rest_e, make_int(t, c));
    }
    return fold(ExprKind::Add, q, floordiv(rest_e, make_int(t, c)));
  }

  // Vectors of indices: ramps and broadcasts combine lane-wise.
  Expr fold_vector(ExprKind kind, const Expr& a, const Expr& b) {
    const auto *ra = a.as<RampNode>(), *rb = b.as<RampNode>();
    const auto *ba = a.as<BroadcastNode>(), *bb = b.as<BroadcastNode>();
    auto scalar = [&](ExprKind k, const Expr& x, const Expr& y) {
      Expr r = fold(k, x, y);
      return r.defined() ? r : make_binary(k, x, y);
    };
    int lanes = a.type().lanes;
    if (ba && bb) return make_broadcast(scalar(kind, ba->value, bb->value), lanes);
    if (kind == ExprKind::Add || kind == ExprKind::Sub) {
      if (ra && bb) return make_ramp(scalar(kind, ra->base, bb->value), ra->stride, lanes);
      if (ba && rb && kind == ExprKind::Add)
        return make_ramp(scalar(kind, ba->value, rb->base), rb->stride, lanes);
      if (ra && rb)
        return make_ramp(scalar(kind, ra->base, rb->base), scalar(kind, ra->stride, rb->stride),
                         lanes);
    }
    if (kind == ExprKind::Mul) {
      if (ra && bb)
        return make_ramp(scalar(kind, ra->base, bb->value), scalar(kind, ra->stride, bb->value),
                         lanes);
      if (ba && rb)
        return make_ramp(scalar(kind, rb->base, ba->value), scalar(kind, rb->stride, ba->value),
                         lanes);
    }
    // Division of a ramp whose lanes stay within one quotient: ramp(x*c + r, 1, n) / c with
    // r + n <= c is a broadcast (common after splitting a vectorized axis).
    if ((kind == ExprKind::FloorDiv || kind == ExprKind::FloorMod) && ra && bb) {
      auto c = as_const_int(bb->value);
      auto s = as_const_int(ra->stride);
      if (c && s && *c > 0 && *s >= 0) {
        Expr q = scalar(ExprKind::FloorDiv, ra->base, bb->value);
        Expr last = scalar(ExprKind::FloorDiv,
                           scalar(ExprKind::Add, ra->base, make_int(ra->base.type(), *s * (lanes - 1))),
                           bb->value);
        if (structural_equal(simplify(q - last, bounds_), make_int(q.type(), 0))) {
          if (kind == ExprKind::FloorDiv) return make_broadcast(q, lanes);
          return make_ramp(scalar(ExprKind::FloorMod, ra->base, bb->value), ra->stride, lanes);
        }
      }
    }
    if (kind >= ExprKind::EQ && kind <= ExprKind::GE) {
      IntBound d = bound(scalar(ExprKind::Sub, a, b));
      if (kind == ExprKind::LT && d.max < 0) return make_bool(true, lanes);
      if (kind == ExprKind::LT && d.min >= 0) return make_bool(false, lanes);
      if (kind == ExprKind::LE && d.max <= 0) return make_bool(true, lanes);
      if (kind == ExprKind::GE && d.min >= 0) return make_bool(true, lanes);
      if (kind == ExprKind::GT && d.min > 0) return make_bool(true, lanes);
    }
    return Expr();
  }

  Expr fold_float(ExprKind kind, const Expr& a, const Expr& b) {
    auto ca = as_const_float(a), cb = as_const_float(b);
    if (!ca || !cb || a.type().is_vector()) {
      // x + 0, x * 1, x * 0 are left alone for floats except the exact identities
      if (kind == ExprKind::Add && cb && *cb == 0.0) return a;
      if (kind == ExprKind::Add && ca && *ca == 0.0) return b;
      if (kind == ExprKind::Mul && cb && *cb == 1.0) return a;
      if (kind == ExprKind::Mul && ca && *ca == 1.0) return b;
      return Expr();
    }
    DataType t = a.type();
    double x = *ca, y = *cb;
    switch (kind) {
      case ExprKind::Add: return make_float(t, x + y);
      case ExprKind::Sub: return make_float(t, x - y);
      case ExprKind::Mul: return make_float(t, x * y);
      case ExprKind::Div: return make_float(t, x / y);
      case ExprKind::Min: return make_float(t, std::min(x, y));
      case ExprKind::Max: return make_float(t, std::max(x, y));
      case ExprKind::EQ: return make_bool(x == y);
      case ExprKind::NE: return make_bool(x != y);
      case ExprKind::LT: return make_bool(x < y);
      case ExprKind::LE: return make_bool(x <= y);
      case ExprKind::GT: return make_bool(x > y);
      case ExprKind::GE: return make_bool(x >= y);
      default: return Expr();
    }
  }

  BoundMap bounds_;
};

}  // namespace

Expr simplify(const Expr& e, const BoundMap& bounds) { return Simplifier(bounds).mutate(e); }
Stmt simplify(const Stmt& s, const BoundMap& bounds) { return Simplifier(bounds).mutate(s); }

bool can_prove(const Expr& cond, const BoundMap& bounds) {
  Expr r = simplify(cond, bounds);
  auto c = as_const_int(r);
  return c && *c != 0;
}

}  // namespace kiln::ir
