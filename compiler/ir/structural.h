// Structural equality and hashing: two trees are equal when they have the same shape, the
// same constants and refer to the same variables and buffers (by identity). Structurally
// equal trees hash alike.
// Used by the simplifier to combine like terms and by tests to compare rewritten IR.
#pragma once

#include <cstddef>

#include "compiler/ir/stmt.h"

namespace kiln::ir {

bool structural_equal(const Expr& a, const Expr& b);
bool structural_equal(const Stmt& a, const Stmt& b);
size_t structural_hash(const Expr& e);
size_t structural_hash(const Stmt& s);

struct ExprHash {
  size_t operator()(const Expr& e) const { return structural_hash(e); }
};
struct ExprEqual {
  bool operator()(const Expr& a, const Expr& b) const { return structural_equal(a, b); }
};

}  // namespace kiln::ir
