#include "cost_model/affine.h"

#include "compiler/ir/op.h"
#include "compiler/ir/substitute.h"

namespace kiln::cost_model {

namespace {

// `uses`: the expression depends on v; `coef`: its step per unit of v when affine.
struct Linear {
  bool uses = false;
  std::optional<int64_t> coef = 0;
};

const Linear kNonAffine{true, std::nullopt};

Linear analyse(const ir::Expr& e, const ir::VarNode* v) {
  if (const auto* var = e.as<ir::VarNode>()) return var == v ? Linear{true, 1} : Linear{};
  if (e.as<ir::IntImmNode>()) return {};
  if (const auto* r = e.as<ir::RampNode>()) return analyse(r->base, v);
  if (const auto* b = e.as<ir::BroadcastNode>()) return analyse(b->value, v);
  if (const auto* c = e.as<ir::CastNode>()) return analyse(c->value, v);
  const auto* bin = e.as<ir::BinaryNode>();
  if (!bin) return ir::uses_var(e, v) ? kNonAffine : Linear{};
  switch (bin->kind) {
    case ir::ExprKind::Add:
    case ir::ExprKind::Sub: {
      Linear a = analyse(bin->a, v), b = analyse(bin->b, v);
      if (!a.coef || !b.coef) return kNonAffine;
      int64_t c = bin->kind == ir::ExprKind::Add ? *a.coef + *b.coef : *a.coef - *b.coef;
      return {a.uses || b.uses, c};
    }
    case ir::ExprKind::Mul: {
      Linear a = analyse(bin->a, v), b = analyse(bin->b, v);
      if (!a.uses && !b.uses) return {};
      if (a.uses && b.uses) return kNonAffine;
      // Affine only when the factor that does not use v is a known constant.
      const Linear& moving = a.uses ? a : b;
      std::optional<int64_t> factor = ir::as_const_int(a.uses ? bin->b : bin->a);
      if (!moving.coef || !factor) return kNonAffine;
      return {true, *moving.coef * *factor};
    }
    default:
      // Division, modulus, min, max, comparisons: not affine once they involve v.
      return ir::uses_var(e, v) ? kNonAffine : Linear{};
  }
}

}  // namespace

std::optional<int64_t> linear_coefficient(const ir::Expr& index, const ir::VarNode* v) {
  return analyse(index, v).coef;
}

}  // namespace kiln::cost_model
