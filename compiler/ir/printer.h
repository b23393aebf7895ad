// Text form of the IR. Unit tests compare lowered code against this text, so the format
// is stable and terse: `for (i, 0, 64) {`, `C[((i*64) + j)] = 0f`, `ramp(x, 1, 16)`.
#pragma once

#include <ostream>
#include <string>

#include "compiler/ir/stmt.h"

namespace kiln::ir {

std::string to_string(const Expr& e);
std::string to_string(const Stmt& s);
std::ostream& operator<<(std::ostream& os, const Expr& e);
std::ostream& operator<<(std::ostream& os, const Stmt& s);

}  // namespace kiln::ir
