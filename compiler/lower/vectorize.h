// Vectorization: a loop marked `vectorize` becomes vector instructions. Its variable turns
// into ramp(min, 1, lanes), loop-invariant values into broadcasts, and each operation
// widens to `lanes`. A body that cannot be widened (a store of a vector to one address, a
// condition that differs per lane, a local allocation) keeps a scalar loop instead, as
// does an extent that is not a power of two (the tails left by loop partitioning).
//
// One condition that differs per lane does vectorize: a guard against a run-time size
// (`sizes`, lower.h) around stores, as a tail of a run-time length has. Its stores and the
// loads they store become masked ones, so the tail runs as one vector, not lane by lane.
#pragma once

#include <vector>

#include "compiler/ir/stmt.h"

namespace kiln::lower {

ir::Stmt vectorize_loops(const ir::Stmt& s, const std::vector<ir::Var>& sizes = {});

}  // namespace kiln::lower
