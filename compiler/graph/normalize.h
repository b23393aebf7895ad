// Opset normalisation: rewrites a node read from an ONNX model of any supported opset into
// kiln's canonical form, the newest (opset 13-17) form of each operator, so that shape
// inference, the evaluator and later passes know one form only:
//  - attributes that later opsets moved to inputs become constant inputs: Slice
//    starts/ends/axes (< 10), Reshape shape (< 5), Squeeze/Unsqueeze axes (< 13), Clip
//    min/max (< 11), Pad pads/value (< 11), Split split (< 13), the axes of every Reduce*
//    (ReduceSum < 13, the others < 18);
//  - Upsample (7-9) and Resize-10 become Resize with inputs (X, roi, scales) and the
//    asymmetric coordinate transformation with floor rounding they were defined with;
//  - before opset 7: consumed_inputs dropped, Caffe2-style `broadcast` (without axis) is
//    numpy broadcasting; Concat before opset 4 gets its then-default axis 1;
//  - Softmax/LogSoftmax/Hardmax before opset 13 (which flatten the input to 2-D at `axis`) get an
//    explicit axis and coerce_to_2d=1.
#pragma once

#include "compiler/graph/graph.h"

namespace kiln::graph {

// `opset` is the model's default-domain opset; new constant inputs go into `graph`.
void normalize_node(Node& node, int64_t opset, Graph& graph);

}  // namespace kiln::graph
