#include "tests/graph/model_builder.h"

#include "compiler/graph/onnx_tensor.h"

namespace kiln::graph::test {

ModelBuilder::ModelBuilder(int64_t opset) {
  model.set_ir_version(8);
  model.set_producer_name("kiln-test");
  onnx::OperatorSetIdProto* id = model.add_opset_import();
  id->set_domain("");
  id->set_version(opset);
  model.mutable_graph()->set_name("test");
}

void ModelBuilder::input(const std::string& name, DataType dtype,
                         const std::vector<DimSpec>& dims) {
  onnx::ValueInfoProto* in = model.mutable_graph()->add_input();
  in->set_name(name);
  onnx::TypeProto::Tensor* t = in->mutable_type()->mutable_tensor_type();
  t->set_elem_type(dtype_to_onnx(dtype));
  onnx::TensorShapeProto* shape = t->mutable_shape();
  for (const DimSpec& d : dims) {
    onnx::TensorShapeProto::Dimension* dim = shape->add_dim();
    if (const int64_t* v = std::get_if<int64_t>(&d))
      dim->set_dim_value(*v);
    else if (!std::get<std::string>(d).empty())
      dim->set_dim_param(std::get<std::string>(d));
  }
}

void ModelBuilder::output(const std::string& name) {
  model.mutable_graph()->add_output()->set_name(name);
}

void ModelBuilder::initializer(const std::string& name, const HostTensor& value) {
  *model.mutable_graph()->add_initializer() = tensor_to_onnx(value, name);
}

onnx::NodeProto& ModelBuilder::node(const std::string& op, const std::vector<std::string>& inputs,
                                    const std::vector<std::string>& outputs,
                                    const std::string& name) {
  onnx::NodeProto* n = model.mutable_graph()->add_node();
  n->set_op_type(op);
  n->set_name(name);
  for (const std::string& i : inputs) n->add_input(i);
  for (const std::string& o : outputs) n->add_output(o);
  return *n;
}

std::string ModelBuilder::bytes() const {
  return model.SerializeAsString();
}

namespace {
onnx::AttributeProto* add(onnx::NodeProto& node, const std::string& name,
                          onnx::AttributeProto::AttributeType type) {
  onnx::AttributeProto* a = node.add_attribute();
  a->set_name(name);
  a->set_type(type);
  return a;
}
}  // namespace

void attr_int(onnx::NodeProto& node, const std::string& name, int64_t value) {
  add(node, name, onnx::AttributeProto::INT)->set_i(value);
}
void attr_float(onnx::NodeProto& node, const std::string& name, float value) {
  add(node, name, onnx::AttributeProto::FLOAT)->set_f(value);
}
void attr_string(onnx::NodeProto& node, const std::string& name, const std::string& value) {
  add(node, name, onnx::AttributeProto::STRING)->set_s(value);
}
void attr_ints(onnx::NodeProto& node, const std::string& name, const std::vector<int64_t>& values) {
  auto* a = add(node, name, onnx::AttributeProto::INTS);
  for (int64_t v : values) a->add_ints(v);
}
void attr_floats(onnx::NodeProto& node, const std::string& name, const std::vector<float>& values) {
  auto* a = add(node, name, onnx::AttributeProto::FLOATS);
  for (float v : values) a->add_floats(v);
}
void attr_tensor(onnx::NodeProto& node, const std::string& name, const HostTensor& value) {
  *add(node, name, onnx::AttributeProto::TENSOR)->mutable_t() = tensor_to_onnx(value, "");
}

HostTensor random_tensor(const std::vector<int64_t>& shape, uint32_t seed, float scale) {
  HostTensor t(DataType::f32(), shape);
  float* p = t.data<float>();
  uint32_t s = seed * 2654435761u + 1;
  for (int64_t i = 0; i < t.numel(); ++i) {
    s = s * 1664525u + 1013904223u;  // LCG: reproducible everywhere
    p[i] = scale * (static_cast<float>(s >> 8) / 8388608.0f - 1.0f);
  }
  return t;
}

HostTensor f32_tensor(const std::vector<int64_t>& shape, const std::vector<double>& values) {
  return HostTensor::from_f64(DataType::f32(), shape, values);
}

}  // namespace kiln::graph::test
