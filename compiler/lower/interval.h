// Symbolic intervals: the range [min, max] an index expression covers while some variables
// sweep their ranges and the others stay fixed. Bound inference uses this to find the
// region of a producer that a consumer reads inside one iteration of a loop.
#pragma once

#include <unordered_map>

#include "compiler/ir/expr.h"

namespace kiln::lower {

struct Interval {
  ir::Expr min, max;  // inclusive; undefined ends mean unbounded
  bool bounded() const { return min.defined() && max.defined(); }
};

using RelaxMap = std::unordered_map<const ir::VarNode*, Interval>;

// The interval of an integer expression when each variable in `relax` takes any value of
// its interval and every other variable is fixed (a single symbolic point).
Interval eval_interval(const ir::Expr& e, const RelaxMap& relax);

// The smallest interval holding both.
Interval interval_union(const Interval& a, const Interval& b);

}  // namespace kiln::lower
