// DataType: the scalar or vector type of an IR value (code, bits, lanes), as in TVM/Halide.
// f32x16 is {Float, 32, 16}; bool is {UInt, 1, 1}; a pointer to a buffer is Handle.
#pragma once

#include <cstdint>
#include <string>

namespace kiln::ir {

enum class TypeCode : uint8_t { Int, UInt, Float, BFloat, Handle };

struct DataType {
  TypeCode code = TypeCode::Handle;
  uint8_t bits = 64;
  uint16_t lanes = 1;

  constexpr DataType() = default;
  constexpr DataType(TypeCode c, int b, int l = 1)
      : code(c), bits(static_cast<uint8_t>(b)), lanes(static_cast<uint16_t>(l)) {}

  static constexpr DataType f32(int l = 1) { return {TypeCode::Float, 32, l}; }
  static constexpr DataType f16(int l = 1) { return {TypeCode::Float, 16, l}; }
  static constexpr DataType f64(int l = 1) { return {TypeCode::Float, 64, l}; }
  static constexpr DataType bf16(int l = 1) { return {TypeCode::BFloat, 16, l}; }
  static constexpr DataType i8(int l = 1) { return {TypeCode::Int, 8, l}; }
  static constexpr DataType i16(int l = 1) { return {TypeCode::Int, 16, l}; }
  static constexpr DataType i32(int l = 1) { return {TypeCode::Int, 32, l}; }
  static constexpr DataType i64(int l = 1) { return {TypeCode::Int, 64, l}; }
  static constexpr DataType u8(int l = 1) { return {TypeCode::UInt, 8, l}; }
  static constexpr DataType u16(int l = 1) { return {TypeCode::UInt, 16, l}; }
  static constexpr DataType u32(int l = 1) { return {TypeCode::UInt, 32, l}; }
  static constexpr DataType boolean(int l = 1) { return {TypeCode::UInt, 1, l}; }
  static constexpr DataType handle() { return {TypeCode::Handle, 64, 1}; }
  // The type of every index, loop variable and shape in kiln: 64-bit so that address
  // arithmetic needs no sign extension and no tensor overflows it.
  static constexpr DataType index() { return i64(); }

  constexpr bool is_int() const { return code == TypeCode::Int; }
  constexpr bool is_uint() const { return code == TypeCode::UInt && bits > 1; }
  constexpr bool is_bool() const { return code == TypeCode::UInt && bits == 1; }
  constexpr bool is_integer() const { return is_int() || is_uint(); }  // not bool
  constexpr bool is_float() const { return code == TypeCode::Float || code == TypeCode::BFloat; }
  constexpr bool is_bfloat() const { return code == TypeCode::BFloat; }
  constexpr bool is_handle() const { return code == TypeCode::Handle; }
  constexpr bool is_scalar() const { return lanes == 1; }
  constexpr bool is_vector() const { return lanes > 1; }
  constexpr int bytes() const { return (bits + 7) / 8; }

  constexpr DataType element() const { return {code, bits, 1}; }
  constexpr DataType with_lanes(int l) const { return {code, bits, l}; }
  constexpr DataType with_bits(int b) const { return {code, b, lanes}; }

  constexpr bool operator==(const DataType&) const = default;

  // "f32", "f32x16", "bf16", "i64", "bool", "handle".
  std::string str() const;
};

// Parses a scalar type name as written by DataType::str ("f32", "bf16", "i8", "bool"...).
// Throws UserError naming the valid choices for anything else.
DataType parse_data_type(const std::string& name);

}  // namespace kiln::ir
