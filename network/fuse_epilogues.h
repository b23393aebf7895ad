// Fusing elementwise successors into Conv / Gemm / MatMul as epilogues (Node::epilogue), so
// the kernel applies them to each output element before storing it: Relu, Clip(0, 6) (relu6),
// Sigmoid, Tanh and the residual Add of a same-shaped computed tensor. A successor fuses
// when it is the only reader of the value and that value is not a graph output. The fused
// node takes the successor's place in the node order, so a residual operand computed between
// the two is ready when it runs.
#pragma once

#include <string>

#include "compiler/graph/graph.h"

namespace kiln::network {

// Returns the number of nodes fused away.
int fuse_epilogues(graph::Graph& graph);

// The schedules' epilogue step (schedules/epilogue.h) of a fused epilogue node: "relu",
// "relu6", "sigmoid", "tanh", "silu", "mish", "hard_swish", "residual".
std::string epilogue_step(const graph::Node& step);

}  // namespace kiln::network
