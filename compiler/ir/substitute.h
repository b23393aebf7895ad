// Replacing variables by expressions, and asking which variables an IR tree uses.
#pragma once

#include <functional>
#include <unordered_map>
#include <unordered_set>

#include "compiler/ir/stmt.h"

namespace kiln::ir {

using VarMap = std::unordered_map<const VarNode*, Expr>;

Expr substitute(const Expr& e, const VarMap& map);
Stmt substitute(const Stmt& s, const VarMap& map);
Expr substitute(const Expr& e, const Var& v, const Expr& value);
Stmt substitute(const Stmt& s, const Var& v, const Expr& value);

bool uses_var(const Expr& e, const VarNode* v);
bool uses_var(const Stmt& s, const VarNode* v);
bool uses_any_var(const Expr& e, const std::unordered_set<const VarNode*>& vars);

}  // namespace kiln::ir
