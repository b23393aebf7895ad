// Constant integer bounds of an expression: the smallest and largest value it can take,
// given bounds of the variables it uses (loop ranges). Unknown ends are ±infinity.
// The simplifier uses this to drop guards, divisions and min/max it can prove away.
#pragma once

#include <cstdint>
#include <limits>
#include <unordered_map>

#include "compiler/ir/expr.h"

namespace kiln::ir {

struct IntBound {
  static constexpr int64_t kNegInf = std::numeric_limits<int64_t>::min();
  static constexpr int64_t kPosInf = std::numeric_limits<int64_t>::max();
  int64_t min = kNegInf;
  int64_t max = kPosInf;

  static IntBound everything() { return {}; }
  static IntBound single(int64_t v) { return {v, v}; }
  bool is_single() const { return min == max; }
  bool bounded() const { return min != kNegInf && max != kPosInf; }
};

using BoundMap = std::unordered_map<const VarNode*, IntBound>;

// Bound of an integer (or bool, as 0/1) expression; vectors bound all their lanes.
IntBound const_int_bound(const Expr& e, const BoundMap& vars);

}  // namespace kiln::ir
