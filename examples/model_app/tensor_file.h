// Reading a model input from a file: raw little-endian f32 values, or a NumPy .npy array of
// float32 in C order (format versions 1, 2 and 3). Plain stdio, no third-party parser: this
// runs on the board beside the tiny runtime.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace kiln::app {

struct TensorFile {
  std::vector<float> values;
  std::vector<int64_t> shape;  // from a .npy header; empty for a raw file
};

// Reads `path` (".npy" by its extension, else raw f32). Throws std::runtime_error naming the
// file and what is wrong: a size that is not a whole number of floats, a .npy of another dtype,
// big-endian or Fortran order, a damaged header.
TensorFile read_tensor_file(const std::string& path);

// Parses the .npy bytes of `path` (what read_tensor_file does after reading the file).
TensorFile parse_npy(const std::vector<uint8_t>& bytes, const std::string& path);

}  // namespace kiln::app
