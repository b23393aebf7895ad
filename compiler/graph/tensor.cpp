#include "compiler/graph/tensor.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <limits>
#include <sstream>

namespace kiln::graph {

namespace {

constexpr DataType kU64{ir::TypeCode::UInt, 64};

// Calls f(T{}) with the storage type of `t` (uint16_t for f16 and bf16, uint8_t for bool).
template <typename F>
decltype(auto) visit_storage(DataType t, F&& f) {
  if (t == DataType::f32()) return f(float{});
  if (t == DataType::f64()) return f(double{});
  if (t == DataType::f16() || t == DataType::bf16()) return f(uint16_t{});
  if (t == DataType::i8()) return f(int8_t{});
  if (t == DataType::i16()) return f(int16_t{});
  if (t == DataType::i32()) return f(int32_t{});
  if (t == DataType::i64()) return f(int64_t{});
  if (t == DataType::u8() || t == DataType::boolean()) return f(uint8_t{});
  if (t == DataType::u16()) return f(uint16_t{});
  if (t == DataType::u32()) return f(uint32_t{});
  if (t == kU64) return f(uint64_t{});
  internal_error() << "HostTensor: unsupported element type " << t.str();
  return f(float{});
}

// C++ leaves out-of-range float -> int conversion undefined; ONNX leaves it unspecified.
// Saturate, and send NaN to 0, so no input makes the evaluator misbehave.
int64_t saturating_i64(double v) {
  if (std::isnan(v)) return 0;
  if (v >= 9.2233720368547758e18) return std::numeric_limits<int64_t>::max();
  if (v <= -9.2233720368547758e18) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(v);
}

// Element i of storage `p` as double, for the tensor's dtype `t`.
template <typename T>
double load_f64(const T* p, int64_t i, DataType t) {
  if constexpr (std::is_same_v<T, uint16_t>) {
    if (t == DataType::f16()) return f16_to_f32(p[i]);
    if (t == DataType::bf16()) return bf16_to_f32(p[i]);
  }
  return static_cast<double>(p[i]);
}

template <typename T>
int64_t load_i64(const T* p, int64_t i, DataType t) {
  if constexpr (std::is_floating_point_v<T>) return saturating_i64(p[i]);
  if constexpr (std::is_same_v<T, uint16_t>) {
    if (t == DataType::f16() || t == DataType::bf16()) return saturating_i64(load_f64(p, i, t));
  }
  return static_cast<int64_t>(p[i]);
}

// v as the integer type T, saturated to T's range (NaN gives 0).
template <typename T>
T saturating(double v) {
  if (std::isnan(v)) return 0;
  if (v <= static_cast<double>(std::numeric_limits<T>::lowest()))
    return std::numeric_limits<T>::lowest();
  if (v >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
  return static_cast<T>(v);
}

template <typename T>
void store_f64(T* p, int64_t i, double v, DataType t) {
  if (t == DataType::boolean()) {
    p[i] = static_cast<T>(v != 0);
  } else if constexpr (std::is_floating_point_v<T>) {
    p[i] = static_cast<T>(v);
  } else if constexpr (std::is_same_v<T, uint16_t>) {
    if (t == DataType::f16())
      p[i] = f32_to_f16(static_cast<float>(v));
    else if (t == DataType::bf16())
      p[i] = f32_to_bf16(static_cast<float>(v));
    else
      p[i] = saturating<T>(v);
  } else {
    p[i] = saturating<T>(v);
  }
}

template <typename T>
void store_i64(T* p, int64_t i, int64_t v, DataType t) {
  if (t == DataType::boolean()) {
    p[i] = static_cast<T>(v != 0);
  } else if constexpr (std::is_floating_point_v<T>) {
    p[i] = static_cast<T>(v);
  } else if constexpr (std::is_same_v<T, uint16_t>) {
    if (t == DataType::f16() || t == DataType::bf16())
      store_f64(p, i, static_cast<double>(v), t);
    else
      p[i] = static_cast<T>(v);
  } else {
    p[i] = static_cast<T>(v);  // wraps, as C++20 defines
  }
}

}  // namespace

bool is_supported_dtype(DataType t) {
  if (t.lanes != 1) return false;
  switch (t.code) {
    case ir::TypeCode::Float:
      return t.bits == 16 || t.bits == 32 || t.bits == 64;
    case ir::TypeCode::BFloat:
      return t.bits == 16;
    case ir::TypeCode::Int:
      return t.bits == 8 || t.bits == 16 || t.bits == 32 || t.bits == 64;
    case ir::TypeCode::UInt:
      return t.bits == 1 || t.bits == 8 || t.bits == 16 || t.bits == 32 || t.bits == 64;
    case ir::TypeCode::Handle:
      return false;
  }
  return false;
}

bool is_float_dtype(DataType t) {
  return t.lanes == 1 && t.is_float();
}

int64_t shape_numel(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    user_check(d >= 0) << "shape " << shape_str(shape) << " has a negative dimension";
    user_check(d == 0 || n <= std::numeric_limits<int64_t>::max() / d)
        << "shape " << shape_str(shape) << " has too many elements";
    n *= d;
  }
  return n;
}

std::string shape_str(const std::vector<int64_t>& shape) {
  std::ostringstream os;
  os << '[';
  for (size_t i = 0; i < shape.size(); ++i) os << (i ? "," : "") << shape[i];
  os << ']';
  return os.str();
}

std::vector<int64_t> shape_strides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) strides[i - 1] = strides[i] * shape[i];
  return strides;
}

namespace {
std::atomic<int64_t> g_max_tensor_bytes{int64_t{1} << 40};
}  // namespace

void set_max_tensor_bytes(int64_t bytes) {
  g_max_tensor_bytes = bytes;
}
int64_t max_tensor_bytes() {
  return g_max_tensor_bytes;
}

void check_allocatable(DataType dtype, const std::vector<int64_t>& shape) {
  user_check(shape_numel(shape) <= max_tensor_bytes() / std::max(1, dtype.bytes()))
      << "a tensor of " << dtype.str() << shape_str(shape) << " would exceed kiln's limit of "
      << max_tensor_bytes() << " bytes per tensor";
}

HostTensor::HostTensor(DataType dtype, std::vector<int64_t> shape)
    : dtype_(dtype), shape_(std::move(shape)) {
  user_check(is_supported_dtype(dtype)) << "element type " << dtype.str() << " is not supported";
  check_allocatable(dtype, shape_);
  numel_ = shape_numel(shape_);
  bytes_.assign(static_cast<size_t>(numel_) * dtype.bytes(), std::byte{0});
}

std::vector<double> HostTensor::to_f64() const {
  std::vector<double> out(numel_);
  visit_storage(dtype_, [&](auto tag) {
    const auto* p = data<decltype(tag)>();
    for (int64_t i = 0; i < numel_; ++i) out[i] = load_f64(p, i, dtype_);
  });
  return out;
}

std::vector<int64_t> HostTensor::to_i64() const {
  std::vector<int64_t> out(numel_);
  visit_storage(dtype_, [&](auto tag) {
    const auto* p = data<decltype(tag)>();
    for (int64_t i = 0; i < numel_; ++i) out[i] = load_i64(p, i, dtype_);
  });
  return out;
}

double HostTensor::f64_at(int64_t i) const {
  internal_check(i >= 0 && i < numel_) << "HostTensor::f64_at(" << i << ") of " << numel_;
  return visit_storage(dtype_,
                       [&](auto tag) { return load_f64(data<decltype(tag)>(), i, dtype_); });
}

int64_t HostTensor::i64_at(int64_t i) const {
  internal_check(i >= 0 && i < numel_) << "HostTensor::i64_at(" << i << ") of " << numel_;
  return visit_storage(dtype_,
                       [&](auto tag) { return load_i64(data<decltype(tag)>(), i, dtype_); });
}

HostTensor HostTensor::from_f64(DataType dtype, std::vector<int64_t> shape,
                                const std::vector<double>& values) {
  HostTensor t(dtype, std::move(shape));
  internal_check(static_cast<int64_t>(values.size()) == t.numel_)
      << "from_f64: " << values.size() << " values for shape " << shape_str(t.shape_);
  visit_storage(dtype, [&](auto tag) {
    auto* p = t.data<decltype(tag)>();
    for (int64_t i = 0; i < t.numel_; ++i) store_f64(p, i, values[i], dtype);
  });
  return t;
}

HostTensor HostTensor::from_i64(DataType dtype, std::vector<int64_t> shape,
                                const std::vector<int64_t>& values) {
  HostTensor t(dtype, std::move(shape));
  internal_check(static_cast<int64_t>(values.size()) == t.numel_)
      << "from_i64: " << values.size() << " values for shape " << shape_str(t.shape_);
  visit_storage(dtype, [&](auto tag) {
    auto* p = t.data<decltype(tag)>();
    for (int64_t i = 0; i < t.numel_; ++i) store_i64(p, i, values[i], dtype);
  });
  return t;
}

HostTensor HostTensor::i64_vector(const std::vector<int64_t>& values) {
  return from_i64(DataType::i64(), {static_cast<int64_t>(values.size())}, values);
}

HostTensor HostTensor::reshaped(std::vector<int64_t> shape) const {
  internal_check(shape_numel(shape) == numel_)
      << "reshape of " << shape_str(shape_) << " to " << shape_str(shape);
  HostTensor t = *this;
  t.shape_ = std::move(shape);
  return t;
}

float f16_to_f32(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  const uint32_t exp = (h >> 10) & 0x1f;
  const uint32_t mant = h & 0x3ff;
  if (exp == 0) {  // zero or subnormal: mant * 2^-24
    float v = std::ldexp(static_cast<float>(mant), -24);
    return sign ? -v : v;
  }
  if (exp == 31) return std::bit_cast<float>(sign | 0x7f800000u | (mant << 13));
  return std::bit_cast<float>(sign | ((exp + 112) << 23) | (mant << 13));
}

uint16_t f32_to_f16(float value) {
  const uint32_t x = std::bit_cast<uint32_t>(value);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000);
  uint32_t abs = x & 0x7fffffffu;
  if (abs > 0x7f800000u) return sign | 0x7e00 | ((abs >> 13) & 0x3ff);  // NaN stays NaN
  if (abs >= 0x477ff000u) return sign | 0x7c00;  // rounds to >= 65520: infinity
  if (abs >= 0x38800000u) {                      // a normal half
    // Re-bias the exponent (127 -> 15) and round the 13 dropped bits to nearest even.
    abs += 0xc8000fffu + ((abs >> 13) & 1);
    return sign | static_cast<uint16_t>(abs >> 13);
  }
  // Subnormal or zero: the value in units of 2^-24, rounded to nearest even.
  float units = std::bit_cast<float>(abs) * 16777216.0f;
  return sign | static_cast<uint16_t>(std::nearbyint(units));
}

float bf16_to_f32(uint16_t bits) {
  return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16);
}

uint16_t f32_to_bf16(float value) {
  const uint32_t x = std::bit_cast<uint32_t>(value);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40);
  return static_cast<uint16_t>((x + 0x7fffu + ((x >> 16) & 1)) >> 16);
}

}  // namespace kiln::graph
