// The IR verifier: checks that loop IR is well formed, as far as the lowering stage it is at
// allows. At every stage each variable is used only where a loop or let binds it, each
// buffer is a kernel argument or allocated around its uses, and no reduction is left; from
// the pass that establishes them on, also what codegen needs (flat accesses, no vector
// loops). A failure is a kiln bug, reported as an InternalError naming the pass before it.
#pragma once

#include <string>
#include <unordered_set>
#include <vector>

#include "compiler/ir/lowered_func.h"

namespace kiln::lower {

// The checks that hold only from some pass on (lower.cpp's pass table says which pass
// establishes each); the others always apply.
struct Invariants {
  bool flat_accesses = false;    // every load and store has one flat index
  bool no_vector_loops = false;  // no loop is left marked vectorized
  static Invariants all() { return {true, true}; }
};

using VarSet = std::unordered_set<const ir::VarNode*>;

// Checks `f` as it is after `after_pass`. Variables in `free_vars` may be used unbound: the
// user's symbolic shapes, which lower() reports as a UserError once all passes ran.
void verify_ir(const ir::LoweredFunc& f, const std::string& after_pass,
               const Invariants& invariants, const VarSet& free_vars = {});

// The final check of a fully lowered kernel: every invariant, no free variable.
void verify_lowered(const ir::LoweredFunc& f, const std::string& after_pass);

// The variables `s` uses where nothing binds them, in the order of their first use.
std::vector<const ir::VarNode*> free_variables(const ir::Stmt& s);

}  // namespace kiln::lower
