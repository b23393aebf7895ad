#include "tools/npy_file.h"

#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <sstream>
#include <system_error>

#include "compiler/base/error.h"
#include "kiln/half.h"
#include "kiln/npy_header.h"
#include "runtime/process/file_bytes.h"

namespace kiln::tools {

namespace {

// numpy's descr of each kiln dtype numpy has (bf16 has none).
const std::vector<std::pair<std::string, std::string>>& descrs() {
  static const std::vector<std::pair<std::string, std::string>> k = {
      {"f32", "<f4"}, {"f64", "<f8"}, {"f16", "<f2"}, {"i64", "<i8"},
      {"i32", "<i4"}, {"i16", "<i2"}, {"i8", "|i1"},  {"u8", "|u1"},
      {"u16", "<u2"}, {"u32", "<u4"}, {"bool", "|b1"}};
  return k;
}

// The kiln dtype of a parsed header (whose dtype is numpy's code without the byte order, e.g.
// "f4"); UserError listing the ones kiln reads.
std::string dtype_of_header(const npy::Header& header, const std::string& path) {
  std::string names;
  for (const auto& [dtype, descr] : descrs()) {
    if (descr.substr(1) == header.dtype) return dtype;
    names += (names.empty() ? "" : ", ") + descr;
  }
  user_error() << path << ": .npy dtype '" << header.descr << "' is not one kiln reads (" << names
               << "; little-endian)";
  return "";
}

// One value as a long double, which holds every i64, u32 and f64 exactly.
long double load(const std::string& dtype, const char* p) {
  auto get = [p]<typename T>(T) {
    T v;
    std::memcpy(&v, p, sizeof v);
    return static_cast<long double>(v);
  };
  if (dtype == "f32") return get(float{});
  if (dtype == "f64") return get(double{});
  if (dtype == "f16") return f16_to_f32(static_cast<uint16_t>(get(uint16_t{})));
  if (dtype == "bf16") return bf16_to_f32(static_cast<uint16_t>(get(uint16_t{})));
  if (dtype == "i64") return get(int64_t{});
  if (dtype == "i32") return get(int32_t{});
  if (dtype == "i16") return get(int16_t{});
  if (dtype == "i8") return get(int8_t{});
  if (dtype == "u8") return get(uint8_t{});
  if (dtype == "u16") return get(uint16_t{});
  if (dtype == "u32") return get(uint32_t{});
  return get(uint8_t{}) != 0;  // bool
}

// Stores `v` as `dtype` at `p`; false where that changes its value.
bool store(const std::string& dtype, long double v, char* p) {
  auto put = [p](auto x) { std::memcpy(p, &x, sizeof x); };
  auto integer = [&]<typename T>(T) {
    if (!(v == std::trunc(v) && v >= static_cast<long double>(std::numeric_limits<T>::min()) &&
          v <= static_cast<long double>(std::numeric_limits<T>::max())))
      return false;
    put(static_cast<T>(v));
    return true;
  };
  auto floating = [&](auto x) {
    put(x);
    return std::isnan(v) || static_cast<long double>(x) == v;
  };
  if (dtype == "f32") return floating(static_cast<float>(v));
  if (dtype == "f64") return floating(static_cast<double>(v));
  if (dtype == "f16" || dtype == "bf16") {
    const float f = static_cast<float>(v);
    const uint16_t h = dtype == "f16" ? f32_to_f16(f) : f32_to_bf16(f);
    put(h);
    return std::isnan(v) ||
           static_cast<long double>(dtype == "f16" ? f16_to_f32(h) : bf16_to_f32(h)) == v;
  }
  if (dtype == "i64") return integer(int64_t{});
  if (dtype == "i32") return integer(int32_t{});
  if (dtype == "i16") return integer(int16_t{});
  if (dtype == "i8") return integer(int8_t{});
  if (dtype == "u8") return integer(uint8_t{});
  if (dtype == "u16") return integer(uint16_t{});
  if (dtype == "u32") return integer(uint32_t{});
  if (v != 0 && v != 1) return false;  // bool
  put(static_cast<uint8_t>(v));
  return true;
}

}  // namespace

size_t dtype_bytes(const std::string& dtype) {
  if (dtype == "f64" || dtype == "i64") return 8;
  if (dtype == "f32" || dtype == "i32" || dtype == "u32") return 4;
  if (dtype == "f16" || dtype == "bf16" || dtype == "i16" || dtype == "u16") return 2;
  if (dtype == "i8" || dtype == "u8" || dtype == "bool") return 1;
  return 0;
}

TensorFile read_tensor_file(const std::string& path) {
  std::error_code ec;
  user_check(!std::filesystem::is_directory(path, ec)) << path << " is a folder, not a tensor file";
  std::string bytes;
  try {
    bytes = read_file_bytes(path);
  } catch (const std::system_error& e) {
    user_error() << e.what();
  }
  TensorFile out;
  if (path.size() < 4 || path.substr(path.size() - 4) != ".npy") {
    out.bytes = std::move(bytes);
    return out;
  }
  // One parser for every .npy reader (kiln/npy_header.h): the header's dict is parsed, not
  // searched, and its counts are overflow-checked before they size anything.
  const npy::ParseResult parsed = npy::parse_header(bytes);
  user_check(parsed.ok()) << path << ": " << parsed.error;
  const npy::Header& header = parsed.header;
  out.dtype = dtype_of_header(header, path);
  const std::string layout = npy::check_c_order_data(header, bytes.size());
  user_check(layout.empty()) << path << ": " << layout;
  out.shape = header.shape;
  out.bytes = bytes.substr(static_cast<size_t>(header.data_offset));
  return out;
}

std::string converted(const TensorFile& f, const std::string& dtype, const std::string& what) {
  const size_t to = dtype_bytes(dtype);
  internal_check(to > 0) << "unknown dtype " << dtype;
  if (f.dtype.empty() || f.dtype == dtype) {
    user_check(f.bytes.size() % to == 0)
        << what << ": " << f.bytes.size() << " bytes is not a whole number of " << dtype
        << " values";
    return f.bytes;
  }
  const size_t from = dtype_bytes(f.dtype), n = f.bytes.size() / from;
  std::string out(n * to, '\0');
  for (size_t i = 0; i < n; ++i) {
    const long double v = load(f.dtype, f.bytes.data() + i * from);
    user_check(store(dtype, v, out.data() + i * to))
        << what << ": value " << static_cast<double>(v) << " at index " << i << " (" << f.dtype
        << ") is not exact as " << dtype;
  }
  return out;
}

void write_npy(const std::string& path, const std::string& dtype, const std::vector<int64_t>& shape,
               const std::string& bytes) {
  std::string descr;
  for (const auto& [d, numpy] : descrs())
    if (d == dtype) descr = numpy;
  user_check(!descr.empty()) << path << ": numpy has no dtype for " << dtype;
  std::string dims;
  for (int64_t d : shape) dims += std::to_string(d) + ",";
  if (shape.size() > 1) dims.pop_back();
  std::string header =
      "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (" + dims + "), }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  const uint16_t len = static_cast<uint16_t>(header.size());
  const char le[2] = {static_cast<char>(len & 0xff), static_cast<char>(len >> 8)};
  std::string file("\x93NUMPY\x01\x00", 8);
  file.append(le, 2).append(header).append(bytes);
  try {
    write_file_bytes(path, file);
  } catch (const std::system_error& e) {
    user_error() << e.what();
  }
}

F32File read_f32_file(const std::string& path) {
  TensorFile t = read_tensor_file(path);
  user_check(t.dtype.empty() || t.dtype == "f32")
      << path << ": a float32 .npy is needed here, this one holds " << t.dtype;
  user_check(t.bytes.size() % 4 == 0)
      << path << ": " << t.bytes.size() << " bytes is not a whole number of f32 values";
  F32File out{std::vector<float>(t.bytes.size() / 4), t.shape};
  std::memcpy(out.values.data(), t.bytes.data(), t.bytes.size());
  return out;
}

}  // namespace kiln::tools
