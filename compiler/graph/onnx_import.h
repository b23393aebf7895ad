// The ONNX frontend: reads a model file into the graph IR in canonical form (normalize.h).
//
// Every problem with the file is one kiln::UserError naming the file and, where there is
// one, the node (index, name, op type) and what is wrong: a file that is not an ONNX
// protobuf, an operator or attribute value kiln does not support, external weights, a value
// nothing defines. Symbolic input dimensions stay symbolic until bind_input_shapes.
#pragma once

#include <string>
#include <string_view>

#include "compiler/graph/graph.h"

namespace kiln::graph {

// Reads a .onnx file.
Graph import_onnx_file(const std::string& path);
// Reads a serialized ModelProto; `source` names it in messages (a file name).
Graph import_onnx_bytes(std::string_view bytes, const std::string& source);
// Reads a serialized TensorProto (.pb), as the ONNX test data sets store inputs and outputs.
HostTensor import_onnx_tensor_file(const std::string& path);

// The ONNX opsets of the default domain that the importer accepts.
constexpr int64_t kMinOpset = 1;
constexpr int64_t kMaxOpset = 18;

}  // namespace kiln::graph
