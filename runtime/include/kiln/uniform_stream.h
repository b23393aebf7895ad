// The one generator of the values kernels are checked and timed on: the tuner's task inputs
// (tuner/host_values.h random_values) and the farm's fill of an argument sent without data
// (rpc/farm/data.h fill_arg) both draw from it. A splitmix64 stream rather than <random>'s
// distributions, whose output the C++ standard leaves to each library: a board's worker built
// against another standard library still draws the same inputs from the same seed.
#ifndef KILN_UNIFORM_STREAM_H
#define KILN_UNIFORM_STREAM_H

#include <cstdint>

namespace kiln {

class UniformStream {
 public:
  explicit UniformStream(uint64_t state) : state_(state) {}
  // Uniform in [-1, 1), with 24 random bits so that it is exact in f32.
  double next() {
    return static_cast<double>(next_bits() >> 40) / static_cast<double>(1 << 23) - 1.0;
  }

 private:
  uint64_t next_bits() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  uint64_t state_;
};

}  // namespace kiln

#endif  // KILN_UNIFORM_STREAM_H
