// A MatMul whose product is then scaled by a scalar constant, Mul(MatMul(A, B), c) or
// Div(MatMul(A, B), c), as attention writes Q K^T / sqrt(d), scales the smaller operand
// instead: MatMul(A * c, B) when A has fewer elements than the product (or B, whichever is
// smallest). A constant operand is scaled once at compile time. Diffusion UNets' attention
// over 1024 positions and 4-wide heads then scales 32 K elements instead of 8 M, and batched
// MatMuls (which have no epilogue) lose a full pass over their output.
#pragma once

#include "compiler/graph/graph.h"

namespace kiln::graph {

// Returns the number of scalings moved.
int scale_matmul_operand(graph::Graph& graph);

}  // namespace kiln::graph
