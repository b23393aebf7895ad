// Text form of the graph IR, for dumps between passes (KILN_DUMP_GRAPH=1) and for tests:
//
//   graph "resnet18" (opset 13) from resnet18.onnx
//     input  data: f32[1,3,224,224]
//     init   conv1.weight: f32[64,3,7,7]
//     init   shape_3: i64[2] = [1,512]
//     %conv1 = Conv(data, conv1.weight, conv1.bias) {group=1, kernel_shape=[7,7], ...} :
//     f32[1,64,112,112] %y = Gemm(...) -> Relu() : f32[1,1000]          (with a fused epilogue)
//     output y
#pragma once

#include <ostream>
#include <string>

#include "compiler/graph/graph.h"

namespace kiln::graph {

std::string print_graph(const Graph& graph);
std::ostream& operator<<(std::ostream& os, const Graph& graph);
// One attribute value as the printer writes it ("[1,1]", "'SAME_UPPER'", "tensor f32[1]").
std::string attr_str(const AttrValue& value);

}  // namespace kiln::graph
