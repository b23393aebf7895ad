#include "compiler/graph/onnx_tensor.h"

#include <cstring>

namespace kiln::graph {

namespace {

constexpr DataType kU64{ir::TypeCode::UInt, 64};

struct TypeCode {
  onnx::TensorProto::DataType onnx;
  DataType kiln;
};

const TypeCode kTypes[] = {
    {onnx::TensorProto::FLOAT, DataType::f32()},    {onnx::TensorProto::DOUBLE, DataType::f64()},
    {onnx::TensorProto::FLOAT16, DataType::f16()},  {onnx::TensorProto::BFLOAT16, DataType::bf16()},
    {onnx::TensorProto::INT8, DataType::i8()},      {onnx::TensorProto::INT16, DataType::i16()},
    {onnx::TensorProto::INT32, DataType::i32()},    {onnx::TensorProto::INT64, DataType::i64()},
    {onnx::TensorProto::UINT8, DataType::u8()},     {onnx::TensorProto::UINT16, DataType::u16()},
    {onnx::TensorProto::UINT32, DataType::u32()},   {onnx::TensorProto::UINT64, kU64},
    {onnx::TensorProto::BOOL, DataType::boolean()},
};

// Copies `count` typed-field values into the tensor, converting each to the element type.
template <typename Field>
void copy_field(const Field& field, HostTensor& t, const std::string& what, const char* name) {
  user_check(field.size() == t.numel())
      << what << ": " << name << " holds " << field.size() << " values, but shape "
      << shape_str(t.shape()) << " needs " << t.numel();
  std::vector<int64_t> ints;
  std::vector<double> reals;
  const DataType dt = t.dtype();
  // f16 and bf16 arrive as bit patterns in int32_data.
  if (dt == DataType::f16() || dt == DataType::bf16()) {
    uint16_t* p = t.data<uint16_t>();
    for (int i = 0; i < field.size(); ++i) p[i] = static_cast<uint16_t>(field.Get(i));
    return;
  }
  if constexpr (std::is_floating_point_v<typename Field::value_type>) {
    for (auto v : field) reals.push_back(v);
    t = HostTensor::from_f64(dt, t.shape(), reals);
  } else {
    for (auto v : field) ints.push_back(static_cast<int64_t>(v));
    t = HostTensor::from_i64(dt, t.shape(), ints);
  }
}

}  // namespace

DataType dtype_from_onnx(int32_t code, const std::string& what) {
  for (const TypeCode& t : kTypes)
    if (t.onnx == code) return t.kiln;
  const char* name =
      onnx::TensorProto::DataType_IsValid(code)
          ? onnx::TensorProto::DataType_Name(static_cast<onnx::TensorProto::DataType>(code)).c_str()
          : nullptr;
  user_error() << what << ": element type " << (name ? name : std::to_string(code))
               << " is not supported (kiln supports float, double, float16, bfloat16, "
                  "int8/16/32/64, uint8/16/32/64 and bool)";
  return DataType::f32();
}

int32_t dtype_to_onnx(DataType dtype) {
  for (const TypeCode& t : kTypes)
    if (t.kiln == dtype) return t.onnx;
  internal_error() << "no ONNX type for " << dtype.str();
  return 0;
}

HostTensor tensor_from_onnx(const onnx::TensorProto& proto, const std::string& what) {
  user_check(proto.data_location() != onnx::TensorProto::EXTERNAL &&
             proto.external_data_size() == 0)
      << what
      << " keeps its data in an external file, which kiln does not read; save the model "
         "with its weights inside (onnx.save_model(..., save_as_external_data=False))";
  user_check(!proto.has_segment()) << what << " is a segment of a tensor, which kiln does not read";
  const DataType dtype = dtype_from_onnx(proto.data_type(), what);
  std::vector<int64_t> shape(proto.dims().begin(), proto.dims().end());
  for (int64_t d : shape)
    user_check(d >= 0) << what << ": shape " << shape_str(shape) << " has a negative dimension";
  HostTensor t(dtype, shape);
  if (proto.has_raw_data()) {
    const std::string& raw = proto.raw_data();
    user_check(raw.size() == t.nbytes())
        << what << ": raw_data has " << raw.size() << " bytes, but " << dtype.str()
        << shape_str(shape) << " needs " << t.nbytes();
    // ONNX stores raw data little-endian, as are x86-64 and AArch64.
    if (!raw.empty()) std::memcpy(t.raw(), raw.data(), raw.size());
    return t;
  }
  switch (proto.data_type()) {
    case onnx::TensorProto::FLOAT:
      copy_field(proto.float_data(), t, what, "float_data");
      break;
    case onnx::TensorProto::DOUBLE:
      copy_field(proto.double_data(), t, what, "double_data");
      break;
    case onnx::TensorProto::INT64:
      copy_field(proto.int64_data(), t, what, "int64_data");
      break;
    case onnx::TensorProto::UINT32:
    case onnx::TensorProto::UINT64:
      copy_field(proto.uint64_data(), t, what, "uint64_data");
      break;
    default:
      copy_field(proto.int32_data(), t, what, "int32_data");
      break;
  }
  return t;
}

onnx::TensorProto tensor_to_onnx(const HostTensor& tensor, const std::string& name) {
  onnx::TensorProto proto;
  proto.set_name(name);
  proto.set_data_type(dtype_to_onnx(tensor.dtype()));
  for (int64_t d : tensor.shape()) proto.add_dims(d);
  proto.set_raw_data(std::string(reinterpret_cast<const char*>(tensor.raw()), tensor.nbytes()));
  return proto;
}

}  // namespace kiln::graph
