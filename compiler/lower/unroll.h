// Unrolling: a loop marked `unroll` with a constant extent becomes that many copies of its
// body, each with the loop variable replaced by its value (so indices become constants
// and small local buffers can live in registers).
#pragma once

#include "compiler/ir/stmt.h"

namespace kiln::lower {

ir::Stmt unroll_loops(const ir::Stmt& s);

}  // namespace kiln::lower
