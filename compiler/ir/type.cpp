#include "compiler/ir/type.h"

#include "compiler/base/error.h"

namespace kiln::ir {

std::string DataType::str() const {
  std::string s;
  switch (code) {
    case TypeCode::Int: s = "i" + std::to_string(bits); break;
    case TypeCode::UInt: s = bits == 1 ? "bool" : "u" + std::to_string(bits); break;
    case TypeCode::Float: s = "f" + std::to_string(bits); break;
    case TypeCode::BFloat: s = "bf" + std::to_string(bits); break;
    case TypeCode::Handle: return "handle";
  }
  if (lanes > 1) s += "x" + std::to_string(lanes);
  return s;
}

DataType parse_data_type(const std::string& name) {
  static const std::pair<const char*, DataType> kTypes[] = {
      {"f32", DataType::f32()},  {"f16", DataType::f16()}, {"bf16", DataType::bf16()},
      {"f64", DataType::f64()},  {"i8", DataType::i8()},   {"u8", DataType::u8()},
      {"i16", DataType::i16()},  {"i32", DataType::i32()}, {"i64", DataType::i64()},
      {"u16", DataType::u16()},  {"u32", DataType::u32()}, {"bool", DataType::boolean()},
  };
  std::string valid;
  for (const auto& [n, t] : kTypes) {
    if (name == n) return t;
    valid += valid.empty() ? n : std::string(", ") + n;
  }
  user_error() << "unknown data type '" << name << "'; valid types: " << valid;
  return {};
}

}  // namespace kiln::ir
