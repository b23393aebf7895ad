// A lowered kernel: what the lowering pipeline hands to codegen.
//
// `body` is loop IR in its final form: every Load/Store has exactly one flat index in
// elements (a scalar i64, a Ramp for a contiguous or strided vector access, or any i64
// vector for a gather/scatter); no Vectorized loops and no Reduce nodes remain. Buffers in
// `args` are the kernel's arguments, in the order of the `void* const* args` array of the
// kernel ABI (runtime/include/kiln/kernel_abi.h); every other buffer is introduced by an
// Allocate.
#pragma once

#include <string>
#include <vector>

#include "compiler/ir/stmt.h"

namespace kiln::ir {

struct LoweredFunc {
  std::string name;
  std::vector<Buffer> args;
  Stmt body;
};

}  // namespace kiln::ir
