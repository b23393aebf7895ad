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


namespace {

// The integer types a kernel argument may have (int8 kernels: u8/i8 data, i16 packed
// weights, i32 sums and biases).
bool integer_arg(ir::DataType t) {
  return t == ir::DataType::u8() || t == ir::DataType::i8() || t == ir::DataType::i16() ||
         t == ir::DataType::i32();
}

// The integer nearest v (half to even), saturated to t's range: what a kernel storing v in t
// holds.
int64_t to_integer(float v, ir::DataType t) {
  const double lo = t.is_uint() ? 0.0 : -std::ldexp(1.0, t.bits - 1);
  const double hi = t.is_uint() ? std::ldexp(1.0, t.bits) - 1 : std::ldexp(1.0, t.bits - 1) - 1;
  return static_cast<int64_t>(std::clamp(std::nearbyint(static_cast<double>(v)), lo, hi));
}

}  // namespace

float round_to(float v, ir::DataType t) {
  if (t == ir::DataType::bf16()) return bf16_to_f32(f32_to_bf16(v));
  if (t == ir::DataType::f16()) return f16_to_f32(f32_to_f16(v));
  if (integer_arg(t)) return static_cast<float>(to_integer(v, t));
  return v;
}

Bytes encode(const Values& v, ir::DataType t) {
  Bytes out(v.size() * t.bytes());
  for (size_t i = 0; i < v.size(); ++i) {
    if (t == ir::DataType::f32()) {
      std::memcpy(&out[i * 4], &v[i], 4);
    } else if (integer_arg(t)) {
      // Little-endian two's complement: the low bytes of the 64-bit value.
      const uint64_t bits = static_cast<uint64_t>(to_integer(v[i], t));
      for (int b = 0; b < t.bytes(); ++b) out[i * t.bytes() + b] = static_cast<uint8_t>(bits >> (8 * b));
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
    } else if (integer_arg(t)) {
      uint64_t bits = 0;
      for (int k = 0; k < t.bytes(); ++k) bits |= uint64_t{b[i * t.bytes() + k]} << (8 * k);
      int64_t x = static_cast<int64_t>(bits);
      if (t.is_int() && t.bits < 64) x = static_cast<int64_t>(bits << (64 - t.bits)) >> (64 - t.bits);
      out[i] = static_cast<float>(x);  // exact below 2^24
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
  // Integers cover the whole of an 8-bit type (the extremes are where int8 kernels saturate
  // or overflow); wider integers (biases, sums) stay within +-2^16.
  if (!integer_arg(t)) {
    for (float& x : v) x = round_to(static_cast<float>(stream.next()), t);
    return v;
  }
  const double span = t.bits == 8 ? std::ldexp(1.0, 7) : std::ldexp(1.0, 16);
  const double offset = t.is_uint() ? span : 0.0;
  for (float& x : v) x = static_cast<float>(std::floor(stream.next() * span + offset));
  return v;
}

double tolerance(ir::DataType t) {
  if (integer_arg(t)) return 0;  // integer kernels are exact
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
