#include "tuner/host_values.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <random>
#include <sstream>

#include "kiln/compare.h"
#include "kiln/half.h"
#include "kiln/uniform_stream.h"

namespace kiln::tuner {


float round_to(float v, ir::DataType t) {
  if (t == ir::DataType::bf16()) return bf16_to_f32(f32_to_bf16(v));
  if (t == ir::DataType::f16()) return f16_to_f32(f32_to_f16(v));
  return v;
}

Bytes encode(const Values& v, ir::DataType t) {
  Bytes out(v.size() * t.bytes());
  for (size_t i = 0; i < v.size(); ++i) {
    if (t == ir::DataType::f32()) {
      std::memcpy(&out[i * 4], &v[i], 4);
    } else {
      uint16_t h = t == ir::DataType::bf16() ? f32_to_bf16(v[i]) : f32_to_f16(v[i]);
      std::memcpy(&out[i * 2], &h, 2);
    }
  }
  return out;
}

Values decode(const Bytes& b, ir::DataType t) {
  Values out(b.size() / t.bytes());
  for (size_t i = 0; i < out.size(); ++i) {
    if (t == ir::DataType::f32()) {
      std::memcpy(&out[i], &b[i * 4], 4);
    } else {
      uint16_t h;
      std::memcpy(&h, &b[i * 2], 2);
      out[i] = t == ir::DataType::bf16() ? bf16_to_f32(h) : f16_to_f32(h);
    }
  }
  return out;
}

Values random_values(size_t n, uint32_t seed, ir::DataType t) {
  UniformStream stream(seed);
  Values v(n);
  for (float& x : v) x = round_to(static_cast<float>(stream.next()), t);
  return v;
}

double tolerance(ir::DataType t) {
  if (t == ir::DataType::bf16()) return 2e-2;
  if (t == ir::DataType::f16()) return 1e-2;
  return 1e-4;
}

Comparison compare(const Values& got, const Values& want, double rtol) {
  Comparison c;
  if (got.size() != want.size()) {
    c.close = false;
    c.mismatches = std::max(got.size(), want.size());
    c.max_error = INFINITY;
    return c;
  }
  Closeness k = judge_closeness(
      got.size(), [&](size_t i) { return double(got[i]); },
      [&](size_t i) { return double(want[i]); }, rtol);
  c.mismatches = k.mismatches;
  c.first = k.first;
  c.max_error = k.max_error;
  c.close = c.mismatches == 0;
  return c;
}

std::string Comparison::message() const {
  std::ostringstream os;
  if (close) os << "all close (max error " << max_error << ")";
  else os << mismatches << " elements differ (first at " << first << "), max error " << max_error;
  return os.str();
}

}  // namespace kiln::tuner
