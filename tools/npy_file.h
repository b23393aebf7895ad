// Tensors as files for `kiln run`: a .npy (C order, little-endian; formats 1.0 to 3.0) of any
// dtype a model's inputs and outputs have, or a raw file of the values' bytes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::tools {

struct TensorFile {
  std::string dtype;           // kiln's name ("f32", "i64", "bool", ...); empty for a raw file
  std::vector<int64_t> shape;  // from a .npy header; empty for raw files
  std::string bytes;           // the values as the file stores them
};

// UserError naming the file: unreadable, not a .npy, a malformed or truncated header (parsed by
// kiln/npy_header.h), Fortran order, big-endian or a dtype kiln has no name for, or data whose
// size is not what the header's shape and dtype say.
TensorFile read_tensor_file(const std::string& path);

// `bytes` (whole values of `dtype`) as a .npy of format 1.0; UserError when it cannot be
// written or numpy has no dtype for it (bf16).
void write_npy(const std::string& path, const std::string& dtype, const std::vector<int64_t>& shape,
               const std::string& bytes);

// The values of `f` as `dtype`: its bytes where the dtypes agree (or the file is raw), else
// each value converted, which must be exact (1.0 to i64 is, 1.5 is not; 300 to i8 is not).
// UserError naming `what` and the first value that does not convert.
std::string converted(const TensorFile& f, const std::string& dtype, const std::string& what);

// The size in bytes of one value of kiln dtype `dtype`; 0 for an unknown name.
size_t dtype_bytes(const std::string& dtype);

// The float32 values of a .npy of dtype f32 or a raw file (the tests' and benches' files).
struct F32File {
  std::vector<float> values;
  std::vector<int64_t> shape;
};
F32File read_f32_file(const std::string& path);

}  // namespace kiln::tools
