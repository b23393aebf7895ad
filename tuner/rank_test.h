// Whether one config is faster than another, from their repeat times, with a stated
// confidence. Timings on a shared machine are not normal (a floor with a tail of slow spells,
// bench/README.md), so the test is on ranks: the Mann-Whitney U test, one-sided. Every pair
// (x of a, y of b) counts 1 when x < y and 1/2 when equal; with neither config faster, that
// count U has mean n_a * n_b / 2. The p-value is the chance of a U at least as large by luck:
// exact (by counting the orderings) for small samples without ties, else the normal
// approximation with the tie correction and a continuity correction.
//
// The end-of-tune re-measurement times its best few and the untuned config side by side in
// interleaved rounds (task_tuner.h), which is what makes the two samples comparable.
#pragma once

#include <string>
#include <vector>

namespace kiln::tuner {

// A gain is claimed at 95% confidence.
inline constexpr double kNoiseLevel = 0.05;

struct SpeedComparison {
  double speedup = 1;  // median(b) / median(a): above 1 when a is faster
  double p_value = 1;  // one-sided: P(U >= observed) were neither faster
  size_t n_a = 0, n_b = 0;
  bool significant() const { return p_value < kNoiseLevel; }
  // "1.18x faster than THAN (p=0.002, 9 vs 9 times)" or "within noise of THAN (1.02x,
  // p=0.31, 9 vs 9 times)".
  std::string str(const std::string& than) const;
};

// Is `a` faster than `b`? Empty samples compare as within noise with p = 1.
SpeedComparison compare_speed(const std::vector<double>& a, const std::vector<double>& b);

}  // namespace kiln::tuner
