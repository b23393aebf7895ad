#include "compiler/lower/vectorize.h"

#include <unordered_map>

#include "compiler/base/error.h"
#include "compiler/ir/functor.h"
#include "compiler/ir/op.h"
#include "compiler/ir/printer.h"
#include "compiler/ir/simplify.h"
#include "compiler/ir/substitute.h"

namespace kiln::lower {

using ir::Expr;
using ir::Stmt;

namespace {

struct CannotVectorize {
  std::string why;
};

Expr widen(const Expr& e, int lanes) {
  return e.type().lanes == lanes ? e : ir::make_broadcast(e, lanes);
}

// Adds `mask` to the predicate of every load and store of a widened body that holds only
// stores: the lanes where a guard holds. Anything else (loops, lets, a load whose address
// is the same for every lane, which a mask of no lane must not read) cannot be masked.
class MaskAccesses : public ir::IRMutator {
 public:
  explicit MaskAccesses(Expr mask) : mask_(std::move(mask)) {}
  using ir::IRMutator::mutate;

 protected:
  Expr masked(const Expr& predicate) const {
    return predicate.defined() ? (predicate && mask_) : mask_;
  }
  Expr mutate(const ir::LoadNode* op, const Expr& self) override {
    Expr e = ir::IRMutator::mutate(op, self);
    const auto* l = e.as<ir::LoadNode>();
    if (l->type.is_scalar()) throw CannotVectorize{"a load the same for every masked lane"};
    return ir::make_load(l->buffer, l->indices, masked(l->predicate));
  }
  Stmt mutate(const ir::StoreNode* op, const Stmt& self) override {
    Stmt s = ir::IRMutator::mutate(op, self);
    const auto* st = s.as<ir::StoreNode>();
    return ir::make_store(st->buffer, st->value, st->indices, masked(st->predicate));
  }
  Stmt mutate(const ir::ForNode*, const Stmt&) override {
    throw CannotVectorize{"a loop under a condition that differs between lanes"};
  }
  Stmt mutate(const ir::LetStmtNode*, const Stmt&) override {
    throw CannotVectorize{"a let under a condition that differs between lanes"};
  }
  Stmt mutate(const ir::IfThenElseNode*, const Stmt&) override {
    throw CannotVectorize{"nested conditions that differ between lanes"};
  }

 private:
  Expr mask_;
};

class Widener : public ir::IRMutator {
 public:
  Widener(const ir::Var& v, Expr ramp, int lanes, const std::vector<ir::Var>& sizes)
      : v_(v), ramp_(std::move(ramp)), lanes_(lanes), sizes_(sizes) {}
  using ir::IRMutator::mutate;

 protected:
  Expr mutate(const ir::VarNode* op, const Expr& self) override {
    if (op == v_.node()) return ramp_;
    auto it = widened_lets_.find(op);
    return it == widened_lets_.end() ? self : it->second;
  }
  Expr mutate(const ir::CastNode* op, const Expr& self) override {
    Expr v = mutate(op->value);
    if (v.same_as(op->value)) return self;
    return ir::make_cast(op->type.with_lanes(v.type().lanes), v);
  }
  Expr mutate(const ir::LoadNode* op, const Expr& self) override {
    Expr e = ir::IRMutator::mutate(op, self);
    const auto* l = e.as<ir::LoadNode>();
    if (l->predicate.defined() && l->type.lanes != l->predicate.type().lanes)
      return ir::make_load(l->buffer, l->indices, widen(l->predicate, l->type.lanes));
    return e;
  }
  Expr mutate(const ir::CallNode* op, const Expr& self) override {
    std::vector<Expr> args;
    if (!mutate_all(op->args, args)) return self;
    // A bit-cast between same-width elements (f32 <-> i32, as the math library does)
    // acts lane by lane, like a pure function.
    bool lanewise_cast = op->call_kind == ir::CallKind::Reinterpret && op->args.size() == 1 &&
                         op->type.is_scalar() && op->args[0].type().bits == op->type.bits;
    if (op->call_kind != ir::CallKind::Pure && !lanewise_cast)
      throw CannotVectorize{"call to " + op->name + " has no vector form"};
    for (Expr& a : args) a = widen(a, lanes_);
    return ir::make_call(op->type.with_lanes(lanes_), op->name, args, op->call_kind);
  }
  Expr mutate(const ir::RampNode*, const Expr&) override {
    throw CannotVectorize{"nested vector loops"};
  }
  Expr mutate(const ir::BroadcastNode* op, const Expr& self) override {
    Expr v = mutate(op->value);
    if (v.same_as(op->value)) return self;
    throw CannotVectorize{"nested vector loops"};
  }
  Expr mutate(const ir::LetNode* op, const Expr& self) override {
    Expr v = mutate(op->value);
    if (v.type().is_vector() && !v.same_as(op->value)) {
      // The variable becomes a vector: uses of it in the body must be widened too, so the
      // body is mutated with the old variable mapped to the new one (not substituted, which
      // would leave the nodes around it typed as scalars).
      ir::Var nv(op->var.name(), v.type());
      widened_lets_[op->var.node()] = nv;
      Expr body = mutate(op->body);
      widened_lets_.erase(op->var.node());
      return ir::make_let(nv, v, body);
    }
    return ir::IRMutator::mutate(op, self);
  }

  Stmt mutate(const ir::StoreNode* op, const Stmt& self) override {
    Expr value = mutate(op->value);
    Expr index = mutate(op->indices[0]);
    if (value.same_as(op->value) && index.same_as(op->indices[0])) return self;
    if (index.type().is_scalar())
      throw CannotVectorize{"every lane would store to the same element of " + op->buffer->name};
    Expr pred = op->predicate.defined() ? widen(mutate(op->predicate), lanes_) : Expr();
    return ir::make_store(op->buffer, widen(value, lanes_), {index}, pred);
  }
  Stmt mutate(const ir::ForNode* op, const Stmt& self) override {
    if (ir::uses_var(op->min, v_.node()) || ir::uses_var(op->extent, v_.node()))
      throw CannotVectorize{"an inner loop's bounds depend on the vector lane"};
    return ir::IRMutator::mutate(op, self);
  }
  Stmt mutate(const ir::IfThenElseNode* op, const Stmt& self) override {
    Expr c = mutate(op->condition);
    if (!c.type().is_vector()) return ir::IRMutator::mutate(op, self);
    bool against_size = false;
    for (const ir::Var& s : sizes_) against_size |= ir::uses_var(op->condition, s.node());
    if (!against_size || op->else_case.defined())
      throw CannotVectorize{"a condition differs between lanes"};
    return MaskAccesses(c).mutate(mutate(op->then_case));
  }
  Stmt mutate(const ir::LetStmtNode* op, const Stmt& self) override {
    Expr v = mutate(op->value);
    if (v.type().is_vector() && !v.same_as(op->value)) {
      ir::Var nv(op->var.name(), v.type());
      widened_lets_[op->var.node()] = nv;
      Stmt body = mutate(op->body);
      widened_lets_.erase(op->var.node());
      return ir::make_let_stmt(nv, v, body);
    }
    return ir::IRMutator::mutate(op, self);
  }
  Stmt mutate(const ir::AllocateNode*, const Stmt&) override {
    throw CannotVectorize{"a buffer allocated inside the vector loop"};
  }

 private:
  ir::Var v_;
  Expr ramp_;
  int lanes_;
  const std::vector<ir::Var>& sizes_;
  std::unordered_map<const ir::VarNode*, Expr> widened_lets_;
};

class Vectorizer : public ir::IRMutator {
 public:
  explicit Vectorizer(const std::vector<ir::Var>& sizes) : sizes_(sizes) {}
  using ir::IRMutator::mutate;

 protected:
  Stmt mutate(const ir::ForNode* op, const Stmt& self) override {
    Stmt s = ir::IRMutator::mutate(op, self);
    const auto* f = s.as<ir::ForNode>();
    if (!f || f->for_kind != ir::ForKind::Vectorized) return s;
    auto ext = ir::as_const_int(f->extent);
    user_check(ext.has_value()) << "vectorize of loop '" << f->var.name()
                                << "' needs a constant extent, but it is " << f->extent;
    auto serial = [&] {
      return ir::make_for(f->var, f->min, f->extent, ir::ForKind::Serial, f->body, f->annotations);
    };
    int64_t n = *ext;
    if (n < 2 || (n & (n - 1)) != 0 || n > 256) return serial();
    try {
      Widener w(f->var, ir::make_ramp(f->min, Expr(1), static_cast<int>(n)), static_cast<int>(n),
                sizes_);
      return ir::simplify(w.mutate(f->body));
    } catch (const CannotVectorize&) {
      return serial();
    }
  }

 private:
  const std::vector<ir::Var>& sizes_;
};

}  // namespace

Stmt vectorize_loops(const Stmt& s, const std::vector<ir::Var>& sizes) {
  return Vectorizer(sizes).mutate(s);
}

}  // namespace kiln::lower
