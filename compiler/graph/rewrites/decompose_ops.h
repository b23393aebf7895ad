// Operators kiln has no kernel for, written as the ones it has, exactly:
//   - LogSoftmax as (x - max) - log(sum(exp(x - max))), which stays finite where
//     log(softmax(x)) would underflow to -inf (CRNN's CTC heads end in LogSoftmax);
//   - Softmax and LogSoftmax over another axis than the last: transposed to the last and back,
//     or, for opset < 13's flattening form, reshaped to [outer, inner];
//   - LRN (AlexNet, GoogLeNet, CaffeNet in the ONNX model zoo): the sum of squares over the
//     channel window is an AveragePool (count_include_pad) of x^2 over [N, 1, C, H x W];
//   - DepthToSpace (both modes) and SpaceToDepth (super-resolution, YOLOv2's reorg): a
//     Reshape, a rank-6 Transpose and a Reshape;
//   - Tile with constant repeats: an Expand between two Reshapes;
//   - ReduceL1, ReduceL2, ReduceSumSquare, ReduceLogSum, ReduceLogSumExp (max-shifted): the
//     reduction kiln has with elementwise steps around it;
//   - Sum and Mean of any number of inputs: a chain of Adds (and a division);
//   - a 3-D pool whose window is one element wide in H and W (PyTorch's LocalResponseNorm):
//     the 2-D pool over [N, C, D, H x W];
//   - Einsum of two operands (attention written with torch.einsum): Transposes and Reshapes
//     around one MatMul;
//   - ConvTranspose whose stride is its kernel (patch unembedding, U-Net 2x2 upsampling): a
//     1x1 Conv and the DepthToSpace-like move of its channels into the patches;
//   - GatherElements, GatherND, ScatterElements and ScatterND (reduction none) with constant
//     indices (in-place slice assignment, x[:, 0] = v, exports as ScatterND): one Gather from
//     the flattened data, and updates, by an element map computed at compile time.
#pragma once

#include <string>
#include <vector>

#include "compiler/graph/graph.h"

namespace kiln::graph {

// The operator types decompose_ops rewrites (Softmax is also a kernel of its own).
const std::vector<std::string>& decomposed_op_types();

// Returns the number of nodes rewritten; the new values have no types until shape inference.
int decompose_ops(graph::Graph& g, int64_t max_concat_inputs);

}  // namespace kiln::graph
