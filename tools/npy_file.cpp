#include "tools/npy_file.h"

#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <sstream>

#include "compiler/base/error.h"
#include "kiln/half.h"

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

std::vector<int64_t> parse_shape(const std::string& header, const std::string& path) {
  size_t at = header.find("'shape':");
  user_check(at != std::string::npos) << path << ": .npy header has no shape";
  size_t open = header.find('(', at), close = header.find(')', at);
  user_check(open != std::string::npos && close != std::string::npos)
      << path << ": malformed .npy shape";
  std::vector<int64_t> shape;
  std::string inner = header.substr(open + 1, close - open - 1);
  for (size_t i = 0; i < inner.size();) {
    while (i < inner.size() && (inner[i] == ' ' || inner[i] == ',')) ++i;
    if (i >= inner.size()) break;
    size_t end = i;
    while (end < inner.size() && std::isdigit(static_cast<unsigned char>(inner[end]))) ++end;
    user_check(end > i) << path << ": malformed .npy shape (" << inner << ")";
    shape.push_back(std::stoll(inner.substr(i, end - i)));
    i = end;
  }
  return shape;
}

// The kiln dtype of a header's descr; UserError listing the ones kiln reads.
std::string dtype_of_header(const std::string& header, const std::string& path) {
  size_t at = header.find("'descr':");
  user_check(at != std::string::npos) << path << ": .npy header has no descr";
  size_t open = header.find('\'', at + 8);
  size_t close = open == std::string::npos ? open : header.find('\'', open + 1);
  user_check(close != std::string::npos) << path << ": malformed .npy descr";
  std::string descr = header.substr(open + 1, close - open - 1);
  // One-byte types may be written with '<' or '=' as well as '|'.
  if (descr.size() == 3 && descr[2] == '1' && (descr[0] == '<' || descr[0] == '=')) descr[0] = '|';
  std::string names;
  for (const auto& [dtype, d] : descrs()) {
    if (d == descr) return dtype;
    names += (names.empty() ? "" : ", ") + d;
  }
  user_error() << path << ": .npy dtype '" << descr << "' is not one kiln reads (" << names
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
  std::ifstream f(path, std::ios::binary);
  user_check(f.good()) << "cannot read " << path;
  std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  TensorFile out;
  if (path.size() < 4 || path.substr(path.size() - 4) != ".npy") {
    out.bytes = std::move(bytes);
    return out;
  }
  user_check(bytes.size() >= 10 && bytes.compare(0, 6, "\x93NUMPY") == 0)
      << path << ": not a .npy file";
  const int major = static_cast<unsigned char>(bytes[6]);
  const size_t start = major == 1 ? 10 : 12;
  user_check(bytes.size() >= start) << path << ": truncated .npy header";
  size_t len = static_cast<unsigned char>(bytes[8]) | static_cast<unsigned char>(bytes[9]) << 8;
  if (major != 1)
    len |= size_t(static_cast<unsigned char>(bytes[10])) << 16 |
           size_t(static_cast<unsigned char>(bytes[11])) << 24;
  user_check(bytes.size() >= start + len) << path << ": truncated .npy header";
  const std::string header = bytes.substr(start, len);
  user_check(header.find("'fortran_order': False") != std::string::npos)
      << path << ": Fortran-order .npy files are not supported";
  out.dtype = dtype_of_header(header, path);
  out.shape = parse_shape(header, path);
  out.bytes = bytes.substr(start + len);
  int64_t count = 1;
  for (int64_t d : out.shape) count *= d;
  user_check(out.bytes.size() == static_cast<size_t>(count) * dtype_bytes(out.dtype))
      << path << ": " << out.bytes.size() << " bytes of data, the header's shape and dtype need "
      << static_cast<size_t>(count) * dtype_bytes(out.dtype);
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
  std::ofstream f(path, std::ios::binary);
  f.write("\x93NUMPY\x01\x00", 8);
  const uint16_t len = static_cast<uint16_t>(header.size());
  const char le[2] = {static_cast<char>(len & 0xff), static_cast<char>(len >> 8)};
  f.write(le, 2);
  f << header;
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  f.close();
  user_check(f.good()) << "cannot write " << path;
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
