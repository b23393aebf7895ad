// The IR verifier: checks that lowered code is what codegen expects (flat accesses, no
// vector loops or reductions left, every variable and buffer defined where it is used).
// A failure here is a kiln bug, reported as an InternalError naming the pass before it.
#pragma once

#include <string>

#include "ir/lowered_func.h"

namespace kiln::lower {

void verify_lowered(const ir::LoweredFunc& f, const std::string& after_pass);

}  // namespace kiln::lower
