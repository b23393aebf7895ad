#include "compiler/ir/substitute.h"

#include "compiler/ir/functor.h"

namespace kiln::ir {

namespace {
class Substituter : public IRMutator {
 public:
  explicit Substituter(const VarMap& map) : map_(map) {}
  using IRMutator::mutate;

 protected:
  Expr mutate(const VarNode* op, const Expr& self) override {
    auto it = map_.find(op);
    return it == map_.end() ? self : it->second;
  }

 private:
  const VarMap& map_;
};
}  // namespace

Expr substitute(const Expr& e, const VarMap& map) {
  if (map.empty()) return e;
  return Substituter(map).mutate(e);
}
Stmt substitute(const Stmt& s, const VarMap& map) {
  if (map.empty()) return s;
  return Substituter(map).mutate(s);
}
Expr substitute(const Expr& e, const Var& v, const Expr& value) {
  return substitute(e, VarMap{{v.node(), value}});
}
Stmt substitute(const Stmt& s, const Var& v, const Expr& value) {
  return substitute(s, VarMap{{v.node(), value}});
}

bool uses_var(const Expr& e, const VarNode* v) {
  bool found = false;
  for_each_expr(e, [&](const Expr& x) { found |= x.get() == v; });
  return found;
}
bool uses_var(const Stmt& s, const VarNode* v) {
  bool found = false;
  for_each_expr(s, [&](const Expr& x) { found |= x.get() == v; });
  return found;
}
bool uses_any_var(const Expr& e, const std::unordered_set<const VarNode*>& vars) {
  bool found = false;
  for_each_expr(e, [&](const Expr& x) {
    if (const auto* v = x.as<VarNode>()) found |= vars.count(v) > 0;
  });
  return found;
}

}  // namespace kiln::ir
