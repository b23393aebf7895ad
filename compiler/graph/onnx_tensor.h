// Conversions between ONNX's protobuf tensors and kiln's: element type codes both ways and
// TensorProto -> HostTensor (raw_data or the typed fields, little-endian). Only the ONNX
// frontend and tests that build ONNX protobufs include this header.
#pragma once

#include <onnx/onnx_pb.h>

#include <string>

#include "compiler/graph/tensor.h"

namespace kiln::graph {

// ONNX TensorProto.DataType code -> kiln type; a UserError (naming `what`) for types kiln does
// not support (string, complex, float8...).
DataType dtype_from_onnx(int32_t code, const std::string& what);
int32_t dtype_to_onnx(DataType dtype);

// The tensor's data; `what` names it in messages ("model.onnx: initializer 'w'"). External
// data, segments and a data size that does not match the shape are UserErrors.
HostTensor tensor_from_onnx(const onnx::TensorProto& proto, const std::string& what);
// The reverse, with raw_data (tests write .pb files and build models with it).
onnx::TensorProto tensor_to_onnx(const HostTensor& tensor, const std::string& name);

}  // namespace kiln::graph
