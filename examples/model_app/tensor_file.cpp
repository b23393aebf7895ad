// .npy and raw f32 input files for model_app.
#include "tensor_file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string_view>

#include "kiln/npy_header.h"

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

std::vector<float> floats_of(const uint8_t* data, size_t bytes) {
  std::vector<float> values(bytes / sizeof(float));
  // Little-endian on every board kiln targets (x86-64, AArch64 Linux): a plain copy.
  if (!values.empty()) std::memcpy(values.data(), data, values.size() * sizeof(float));
  return values;
}

}  // namespace

TensorFile parse_npy(const std::vector<uint8_t>& bytes, const std::string& path) {
  // The header parser kiln's CLI uses too (header-only, standard library only): the dict is
  // parsed, not searched, and the shape's counts are overflow-checked.
  const std::string_view file(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  const npy::ParseResult parsed = npy::parse_header(file);
  if (!parsed.ok()) fail(path, parsed.error);
  const npy::Header& header = parsed.header;
  if (header.dtype != "f4")
    fail(path, "dtype '" + header.descr + "', model_app reads float32 ('<f4')");
  if (const std::string e = npy::check_c_order_data(header, bytes.size()); !e.empty())
    fail(path, e);
  TensorFile t;
  t.shape = header.shape;
  t.values = floats_of(bytes.data() + header.data_offset, static_cast<size_t>(header.byte_count));
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
