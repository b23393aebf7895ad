#include "tools/npy_file.h"

#include <cstring>
#include <fstream>
#include <iterator>

#include "compiler/base/error.h"

namespace kiln::tools {

namespace {

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

}  // namespace

F32File read_f32_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  user_check(f.good()) << "cannot read " << path;
  std::vector<char> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  F32File out;
  size_t data = 0;
  if (path.size() >= 4 && path.substr(path.size() - 4) == ".npy") {
    user_check(bytes.size() >= 10 && std::memcmp(bytes.data(), "\x93NUMPY", 6) == 0)
        << path << ": not a .npy file";
    const int major = static_cast<unsigned char>(bytes[6]);
    size_t len = 0, start = major == 1 ? 10 : 12;
    user_check(bytes.size() >= start) << path << ": truncated .npy header";
    len = static_cast<unsigned char>(bytes[8]) | static_cast<unsigned char>(bytes[9]) << 8;
    if (major != 1)
      len |= size_t(static_cast<unsigned char>(bytes[10])) << 16 |
             size_t(static_cast<unsigned char>(bytes[11])) << 24;
    user_check(bytes.size() >= start + len) << path << ": truncated .npy header";
    std::string header(bytes.data() + start, len);
    user_check(header.find("<f4") != std::string::npos)
        << path << ": only little-endian float32 .npy files are supported";
    user_check(header.find("'fortran_order': False") != std::string::npos)
        << path << ": Fortran-order .npy files are not supported";
    out.shape = parse_shape(header, path);
    data = start + len;
  }
  user_check((bytes.size() - data) % 4 == 0)
      << path << ": " << bytes.size() - data << " bytes is not a whole number of f32 values";
  out.values.resize((bytes.size() - data) / 4);
  std::memcpy(out.values.data(), bytes.data() + data, out.values.size() * 4);
  return out;
}

void write_npy(const std::string& path, const std::vector<float>& values,
               const std::vector<int64_t>& shape) {
  std::string dims;
  for (int64_t d : shape) dims += std::to_string(d) + ",";
  if (shape.size() > 1) dims.pop_back();
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + dims + "), }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::ofstream f(path, std::ios::binary);
  f.write("\x93NUMPY\x01\x00", 8);
  const uint16_t len = static_cast<uint16_t>(header.size());
  const char le[2] = {static_cast<char>(len & 0xff), static_cast<char>(len >> 8)};
  f.write(le, 2);
  f << header;
  f.write(reinterpret_cast<const char*>(values.data()), static_cast<std::streamsize>(values.size() * 4));
  f.close();
  user_check(f.good()) << "cannot write " << path;
}

}  // namespace kiln::tools
