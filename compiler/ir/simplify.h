// The arithmetic simplifier: constant folding, canonical linear forms for integer index
// arithmetic (like terms combined, constants last), and min/max, div/mod, comparisons and
// conditionals resolved when the bounds of loop variables decide them.
//
// Statement simplification also drops loops of extent 0, turns loops of extent 1 into
// their body, and removes conditionals that are always true or always false.
#pragma once

#include "compiler/ir/bounds.h"
#include "compiler/ir/stmt.h"

namespace kiln::ir {

Expr simplify(const Expr& e, const BoundMap& bounds = {});
Stmt simplify(const Stmt& s, const BoundMap& bounds = {});

// True when the simplifier can show that `cond` holds for every value of the variables
// within `bounds` (false means "not proven", not "false").
bool can_prove(const Expr& cond, const BoundMap& bounds = {});

}  // namespace kiln::ir
