// Builds small ONNX models in tests with the protobuf API: inputs with fixed or symbolic
// dimensions, initializers, nodes with attributes, serialised for import_onnx_bytes.
#pragma once

#include <onnx/onnx_pb.h>

#include <string>
#include <variant>
#include <vector>

#include "compiler/graph/tensor.h"

namespace kiln::graph::test {

// A dimension: a size, or a symbol name ("" for an unnamed unknown dimension).
using DimSpec = std::variant<int64_t, std::string>;

class ModelBuilder {
 public:
  explicit ModelBuilder(int64_t opset = 13);

  void input(const std::string& name, DataType dtype, const std::vector<DimSpec>& dims);
  void output(const std::string& name);
  void initializer(const std::string& name, const HostTensor& value);
  // Adds a node; attributes go on the returned proto with the attr_* helpers.
  onnx::NodeProto& node(const std::string& op, const std::vector<std::string>& inputs,
                        const std::vector<std::string>& outputs, const std::string& name = "");

  std::string bytes() const;
  onnx::ModelProto model;
};

void attr_int(onnx::NodeProto& node, const std::string& name, int64_t value);
void attr_float(onnx::NodeProto& node, const std::string& name, float value);
void attr_string(onnx::NodeProto& node, const std::string& name, const std::string& value);
void attr_ints(onnx::NodeProto& node, const std::string& name, const std::vector<int64_t>& values);
void attr_floats(onnx::NodeProto& node, const std::string& name, const std::vector<float>& values);
void attr_tensor(onnx::NodeProto& node, const std::string& name, const HostTensor& value);

// Deterministic pseudo-random f32 tensor in [-scale, scale).
HostTensor random_tensor(const std::vector<int64_t>& shape, uint32_t seed, float scale = 1.0f);
HostTensor f32_tensor(const std::vector<int64_t>& shape, const std::vector<double>& values);

}  // namespace kiln::graph::test
