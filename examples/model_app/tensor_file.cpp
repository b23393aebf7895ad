// .npy and raw f32 input files for model_app.
#include "tensor_file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace kiln::app {
namespace {

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw std::runtime_error("input file '" + path + "': " + what);
}

std::vector<uint8_t> read_bytes(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) fail(path, std::strerror(errno));
  std::vector<uint8_t> bytes;
  uint8_t chunk[65536];
  for (size_t n; (n = std::fread(chunk, 1, sizeof chunk, f)) > 0;)
    bytes.insert(bytes.end(), chunk, chunk + n);
  const bool error = std::ferror(f);
  std::fclose(f);
  if (error) fail(path, "read error");
  return bytes;
}

// The text after `key` in the header dict, with leading spaces skipped ("" when absent).
std::string value_of(const std::string& header, const std::string& key) {
  const size_t at = header.find("'" + key + "'");
  if (at == std::string::npos) return "";
  size_t v = header.find(':', at);
  if (v == std::string::npos) return "";
  ++v;
  while (v < header.size() && header[v] == ' ') ++v;
  return header.substr(v);
}

std::vector<float> floats_of(const uint8_t* data, size_t bytes) {
  std::vector<float> values(bytes / sizeof(float));
  // Little-endian on every board kiln targets (x86-64, AArch64 Linux): a plain copy.
  if (!values.empty()) std::memcpy(values.data(), data, values.size() * sizeof(float));
  return values;
}

}  // namespace

TensorFile parse_npy(const std::vector<uint8_t>& bytes, const std::string& path) {
  if (bytes.size() < 10 || std::memcmp(bytes.data(), "\x93NUMPY", 6) != 0)
    fail(path, "not a .npy file (no \\x93NUMPY magic)");
  const int major = bytes[6];
  size_t header_len = 0, header_at = 0;
  if (major == 1) {
    header_len = bytes[8] | bytes[9] << 8;
    header_at = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) fail(path, "truncated .npy header");
    header_len = bytes[8] | bytes[9] << 8 | bytes[10] << 16 | size_t(bytes[11]) << 24;
    header_at = 12;
  } else {
    fail(path, ".npy format version " + std::to_string(major) + " (versions 1 to 3 are read)");
  }
  if (header_at + header_len > bytes.size()) fail(path, "truncated .npy header");
  const std::string header(reinterpret_cast<const char*>(bytes.data() + header_at), header_len);

  const std::string descr = value_of(header, "descr");
  if (descr.rfind("'<f4'", 0) != 0)
    fail(path, "dtype " + descr.substr(0, descr.find(',')) + ", model_app reads float32 ('<f4')");
  if (value_of(header, "fortran_order").rfind("False", 0) != 0)
    fail(path, "Fortran-ordered array; save it in C order");
  const std::string shape_text = value_of(header, "shape");
  if (shape_text.empty() || shape_text[0] != '(') fail(path, "no shape in the .npy header");
  TensorFile t;
  uint64_t count = 1;
  size_t at = 1;
  while (at < shape_text.size() && shape_text[at] != ')') {
    if (shape_text[at] == ' ' || shape_text[at] == ',') {
      ++at;
      continue;
    }
    size_t used = 0;
    long long d = -1;
    try {
      d = std::stoll(shape_text.substr(at), &used);
    } catch (const std::exception&) {
    }
    if (d < 0 || used == 0)
      fail(path, "bad shape " + shape_text.substr(0, shape_text.find(')') + 1));
    t.shape.push_back(d);
    count *= static_cast<uint64_t>(d);
    at += used;
  }
  const size_t data_at = header_at + header_len;
  if (bytes.size() - data_at != count * sizeof(float)) {
    fail(path, "the header's shape holds " + std::to_string(count) + " floats, the file " +
                   std::to_string((bytes.size() - data_at) / sizeof(float)));
  }
  t.values = floats_of(bytes.data() + data_at, bytes.size() - data_at);
  return t;
}

TensorFile read_tensor_file(const std::string& path) {
  const std::vector<uint8_t> bytes = read_bytes(path);
  if (path.size() >= 4 && path.compare(path.size() - 4, 4, ".npy") == 0)
    return parse_npy(bytes, path);
  if (bytes.size() % sizeof(float) != 0)
    fail(path, std::to_string(bytes.size()) + " bytes is not a whole number of f32 values");
  TensorFile t;
  t.values = floats_of(bytes.data(), bytes.size());
  return t;
}

}  // namespace kiln::app
