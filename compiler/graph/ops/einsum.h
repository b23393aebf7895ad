// Einsum's equation, read once for the reference evaluator (einsum.cpp) and for the network
// compiler, which writes two-operand einsums as one MatMul (network/decompose_ops.h).
#pragma once

#include <string>
#include <vector>

#include "compiler/graph/ops/op.h"

namespace kiln::graph {

struct EinsumEquation {
  std::vector<std::string> inputs;  // one letter per dimension of each operand
  std::string output;
};

// "bij,bjk->bik", or the implicit form "ij,jk" whose output is the letters that occur once,
// in alphabetical order. Spaces are ignored. UserError for '...' (not supported), for a
// character that is not a letter, and for a term count other than `operands`.
EinsumEquation parse_einsum(const std::string& equation, size_t operands);

OpDef einsum_op();

}  // namespace kiln::graph
