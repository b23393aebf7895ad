// Loop partitioning: peels the iterations of a loop where a guard may fail off the ones
// where it provably holds, so the main body of a tiled loop carries no condition.
//
//   for (io, 0, 13) { if (io*8 + ii < 100) ... }   becomes
//   for (io, 0, 12) { ... }   and   the guarded iteration io = 12 (simplified on its own)
//
// Only guards of the form `c*v + rest < bound` with c > 0 and a constant-bounded rest are
// used; anything else stays guarded and correct.
//
// A kernel that takes sizes at run time (`sizes`: a sequence length, an image width) has
// guards against them, such as `io*8 + ii < M`: a serial or parallel loop is then split at
// an extent computed at run time, here floor(M/8), and its main part drops those guards.
#pragma once

#include <vector>

#include "compiler/ir/stmt.h"

namespace kiln::lower {

ir::Stmt partition_loops(const ir::Stmt& s, const std::vector<ir::Var>& sizes = {});

}  // namespace kiln::lower
