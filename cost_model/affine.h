// How a flat buffer index moves with a loop variable: the constant step it takes per
// iteration when the index is affine in that variable (i*768 + k*2 + 3 moves 2 per k), or
// nothing when it is not (k/4, k*k, a gathered load). The cost model's strides come from
// here. Let-bound variables must already be substituted into the index.
#pragma once

#include <cstdint>
#include <optional>

#include "compiler/ir/expr.h"

namespace kiln::cost_model {

// The coefficient of `v` in `index`: 0 when the index does not use v, nullopt when it uses
// v in a way that is not affine. A Ramp or Broadcast index answers for its first lane.
std::optional<int64_t> linear_coefficient(const ir::Expr& index, const ir::VarNode* v);

}  // namespace kiln::cost_model
