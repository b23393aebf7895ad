// From ONNX operators to the operator library's workloads: one table entry per ONNX op type,
// a function that reads the node (attributes, input and output shapes) and returns the
// Workload its kernel computes and which graph value feeds each of the template's logical
// inputs (by the input's name: "data", "weight", "bias", "residual", "A", "B", "a", "b",
// "X0"...). Supporting one more operator is one more entry.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "compiler/graph/graph.h"
#include "schedules/op_template.h"

namespace kiln::network {

struct MappedNode {
  schedules::Workload workload;
  std::map<std::string, std::string> operands;  // template input name -> graph value
};

// The workload of `node`. Mappers may add constants to `graph` (a transposed Gemm weight).
// UserError naming the node, its op type and the reason when kiln cannot compile it (an
// operator with no entry, an attribute value the kernels do not implement).
MappedNode map_node(graph::Graph& graph, const graph::Node& node);

// Whether the network compiler holds values of type `t`: f32, and bool, int32 and int64
// values, which it holds in f32 (exact up to 2^24) and converts at the model's inputs and
// outputs.
bool holds_dtype(graph::DataType t);
// (Inside, uint8 and int8 values also flow between the quantization operators and the int8
// kernels: network/map_quantized.cpp.)
inline constexpr const char* kDtypeRule =
    "kiln compiles f32 networks (with bool, int32 and int64 values)";

// The ONNX op types with an entry, sorted.
std::vector<std::string> supported_op_types();

}  // namespace kiln::network
