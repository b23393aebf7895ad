// Storage flattening: multi-dimensional buffer accesses become one flat element index
// (row-major), and every buffer becomes one-dimensional. After this pass, loads and stores
// look like what codegen emits: `C[((i*64) + j)]`.
#pragma once

#include <vector>

#include "compiler/ir/stmt.h"

namespace kiln::lower {

// Flattens `s`; `args` (the kernel's buffers) are replaced in place by their flat versions.
ir::Stmt flatten_storage(const ir::Stmt& s, std::vector<ir::Buffer>& args);

}  // namespace kiln::lower
