// Tensors as files for `kiln run`: reading an input (raw little-endian f32, or a float32 .npy
// in C order) and writing an output as a float32 .npy (format 1.0).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::tools {

struct F32File {
  std::vector<float> values;
  std::vector<int64_t> shape;  // from a .npy header; empty for raw files
};

// UserError naming the file: unreadable, not whole floats, a .npy of another dtype or order.
F32File read_f32_file(const std::string& path);
void write_npy(const std::string& path, const std::vector<float>& values,
               const std::vector<int64_t>& shape);

}  // namespace kiln::tools
