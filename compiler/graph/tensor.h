// HostTensor: a dense, row-major tensor in host memory. It holds the graph's initializers
// (weights, folded constants) and is what the reference evaluator reads and writes.
//
// Elements are stored in their own type (f16 and bf16 as their 16-bit patterns, bool as one
// byte). Operators that do arithmetic read them through one of two compute types, `double`
// for floating-point tensors and `int64_t` for integer and bool ones (to_f64 / to_i64), and
// write results back with from_f64 / from_i64: f32 arithmetic in double then rounded once is
// the most accurate oracle, and i64 keeps index arithmetic exact.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "compiler/base/error.h"
#include "compiler/ir/type.h"

namespace kiln::graph {

using ir::DataType;

// The element types a graph value may have: f16 bf16 f32 f64, i8 i16 i32 i64, u8 u16 u32
// u64, bool.
bool is_supported_dtype(DataType t);
// f16, bf16, f32, f64: the types computed in double.
bool is_float_dtype(DataType t);

// Elements of a shape; a UserError when a dimension is negative or the count overflows.
int64_t shape_numel(const std::vector<int64_t>& shape);
// "[1,3,224,224]"; "[]" for a scalar.
std::string shape_str(const std::vector<int64_t>& shape);
// Row-major strides of a shape, in elements.
std::vector<int64_t> shape_strides(const std::vector<int64_t>& shape);

// A UserError when a tensor of this type and shape would be larger than the limit (2^40
// bytes unless set otherwise): a corrupt or hostile model must not make kiln allocate, or
// loop, without bound. The fuzzer lowers the limit so that each input runs quickly.
void check_allocatable(DataType dtype, const std::vector<int64_t>& shape);
void set_max_tensor_bytes(int64_t bytes);
int64_t max_tensor_bytes();

class HostTensor {
 public:
  HostTensor() = default;
  // Zero-filled.
  HostTensor(DataType dtype, std::vector<int64_t> shape);

  DataType dtype() const { return dtype_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  int64_t rank() const { return static_cast<int64_t>(shape_.size()); }
  int64_t numel() const { return numel_; }
  size_t nbytes() const { return bytes_.size(); }
  std::byte* raw() { return bytes_.data(); }
  const std::byte* raw() const { return bytes_.data(); }

  // The elements as their storage type T (float for f32, uint16_t for f16/bf16, uint8_t for
  // bool...); T must have the element's size.
  template <typename T>
  T* data() {
    internal_check(sizeof(T) == static_cast<size_t>(dtype_.bytes()))
        << "HostTensor::data: element size " << sizeof(T) << " for " << dtype_.str();
    return reinterpret_cast<T*>(bytes_.data());
  }
  template <typename T>
  const T* data() const {
    return const_cast<HostTensor*>(this)->data<T>();
  }

  // Every element converted to a compute type.
  std::vector<double> to_f64() const;
  std::vector<int64_t> to_i64() const;
  // One element converted (for scalars and small index tensors).
  double f64_at(int64_t i) const;
  int64_t i64_at(int64_t i) const;

  // A tensor of `dtype` from compute-type values: float types round to nearest; from
  // doubles, integer types truncate toward zero and saturate (NaN gives 0); from int64 they
  // wrap; bool is "non-zero".
  static HostTensor from_f64(DataType dtype, std::vector<int64_t> shape,
                             const std::vector<double>& values);
  static HostTensor from_i64(DataType dtype, std::vector<int64_t> shape,
                             const std::vector<int64_t>& values);
  // A 1-D i64 tensor (shapes, axes, pads).
  static HostTensor i64_vector(const std::vector<int64_t>& values);

  // The same bytes under another shape with the same element count.
  HostTensor reshaped(std::vector<int64_t> shape) const;

 private:
  DataType dtype_ = DataType::f32();
  std::vector<int64_t> shape_;
  int64_t numel_ = 1;
  std::vector<std::byte> bytes_ = std::vector<std::byte>(4);
};

// IEEE half and bfloat16 conversions, round to nearest even; NaN stays NaN.
float f16_to_f32(uint16_t bits);
uint16_t f32_to_f16(float value);
float bf16_to_f32(uint16_t bits);
uint16_t f32_to_bf16(float value);

}  // namespace kiln::graph
