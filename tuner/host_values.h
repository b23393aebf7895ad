// Tensor values on the host: f32 vectors and their byte encodings in a kernel's element
// type (f32, f16, bf16 with round-to-nearest-even; u8, i8, i16, i32 rounded half to even and
// saturated), deterministic random inputs, and the comparison the tests, `kiln inspect
// --run` and the tuner's correctness check share.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/ir/type.h"

namespace kiln::tuner {

using Bytes = std::vector<uint8_t>;
using Values = std::vector<float>;

float round_to(float v, ir::DataType t);
Bytes encode(const Values& v, ir::DataType t);
Values decode(const Bytes& b, ir::DataType t);
// Uniform values in [-1, 1), rounded to `t` (so a reference sees what the kernel sees); for an
// integer type, integers over all of an 8-bit range or within +-2^16 for wider ones: the one
// input generator (kiln/uniform_stream.h), as the farm fills an argument sent without data.
Values random_values(size_t n, uint32_t seed, ir::DataType t);

// Relative tolerance by element type: f32 1e-4, f16 1e-2, bf16 2e-2, integers 0 (exact).
double tolerance(ir::DataType t);

struct Comparison {
  bool close = true;
  size_t mismatches = 0, first = 0;
  // max |got - want| / max(1, |want|); infinity for a NaN or infinity that does not match.
  // NaN matches NaN and an infinity the same infinity.
  double max_error = 0;  // max |got - want| / max(1, |want|, rms(want))
  std::string message() const;
};
Comparison compare(const Values& got, const Values& want, double rtol);

}  // namespace kiln::tuner
