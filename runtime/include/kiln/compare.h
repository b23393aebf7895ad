// The one rule by which kiln judges a kernel's output against its reference, wherever the
// check runs (the tuner on the host, a farm worker on a board, the tests): element i is
// close when |got - want| <= rtol * max(1, |want|, rms(want)). NaN matches NaN and an
// infinity the same infinity.
//
// Why the RMS: a long f32 reduction (a 512-channel 3x3 conv sums 4608 products) whose result
// cancels to near zero keeps the absolute rounding error of its large partial sums, so its
// error relative to itself says nothing; a wrong index or a missing term is still off by the
// order of the values themselves and fails. Header-only: the runtime and the farm worker
// carry it without linking anything.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>

namespace kiln {

struct Closeness {
  bool close = true;
  std::size_t mismatches = 0, first = 0;  // first: the index of the first mismatch
  double max_error = 0;                   // the largest |got - want| / scale seen
};

// `got(i)` and `want(i)` return element i as a double.
template <typename Got, typename Want>
Closeness judge_closeness(std::size_t n, Got got, Want want, double rtol) {
  double sum_sq = 0;
  std::size_t finite = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double w = want(i);
    if (std::isfinite(w)) sum_sq += w * w, ++finite;
  }
  const double rms = finite ? std::sqrt(sum_sq / double(finite)) : 0.0;
  Closeness c;
  for (std::size_t i = 0; i < n; ++i) {
    const double g = got(i), w = want(i);
    if (g == w || (std::isnan(g) && std::isnan(w))) continue;
    double err = std::fabs(g - w) / std::max({1.0, std::fabs(w), rms});
    if (std::isnan(err)) err = INFINITY;  // an infinity against a finite value, say
    c.max_error = std::max(c.max_error, err);
    if (!(err <= rtol) && c.mismatches++ == 0) c.first = i;
  }
  c.close = c.mismatches == 0;
  return c;
}

}  // namespace kiln
