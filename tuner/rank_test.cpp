#include "tuner/rank_test.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace kiln::tuner {
namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// P(U >= u) with no ties, by counting: ways[i][j][k] orderings of i values of a and j of b with
// U = k. The largest value is either a's (it is below none of b's: U unchanged) or b's (every
// one of a's i values is below it: U gains i).
double exact_p(size_t na, size_t nb, size_t u) {
  const size_t max_u = na * nb;
  std::vector<std::vector<std::vector<double>>> ways(
      na + 1, std::vector<std::vector<double>>(nb + 1, std::vector<double>(max_u + 1, 0)));
  for (size_t i = 0; i <= na; ++i)
    for (size_t j = 0; j <= nb; ++j)
      for (size_t k = 0; k <= i * j; ++k) {
        if (i == 0 || j == 0) {
          ways[i][j][k] = k == 0;
          continue;
        }
        ways[i][j][k] = ways[i - 1][j][k] + (k >= i ? ways[i][j - 1][k - i] : 0);
      }
  double at_least = 0, total = 0;
  for (size_t k = 0; k <= max_u; ++k) {
    total += ways[na][nb][k];
    if (k >= u) at_least += ways[na][nb][k];
  }
  return at_least / total;
}

}  // namespace

SpeedComparison compare_speed(const std::vector<double>& a, const std::vector<double>& b) {
  SpeedComparison c;
  c.n_a = a.size();
  c.n_b = b.size();
  if (a.empty() || b.empty()) return c;
  c.speedup = median(b) / median(a);
  // U, counted in halves so that ties stay exact.
  size_t twice_u = 0;
  for (double x : a)
    for (double y : b) twice_u += x < y ? 2 : x == y ? 1 : 0;
  // Ties across the pooled sample: sizes of the groups of equal values.
  std::vector<double> pooled = a;
  pooled.insert(pooled.end(), b.begin(), b.end());
  std::sort(pooled.begin(), pooled.end());
  double tie_term = 0;
  for (size_t i = 0; i < pooled.size();) {
    size_t j = i;
    while (j < pooled.size() && pooled[j] == pooled[i]) ++j;
    const double t = static_cast<double>(j - i);
    tie_term += t * t * t - t;
    i = j;
  }
  const double na = static_cast<double>(a.size()), nb = static_cast<double>(b.size());
  if (tie_term == 0 && a.size() * b.size() <= 400) {
    c.p_value = exact_p(a.size(), b.size(), twice_u / 2);
    return c;
  }
  const double n = na + nb;
  const double mean = na * nb / 2;
  const double variance = na * nb / 12 * ((n + 1) - tie_term / (n * (n - 1)));
  if (variance <= 0) return c;  // every time equal: no evidence either way
  const double z = (twice_u / 2.0 - mean - 0.5) / std::sqrt(variance);
  c.p_value = 0.5 * std::erfc(z / std::sqrt(2.0));
  return c;
}

std::string SpeedComparison::str(const std::string& than) const {
  char numbers[96];
  if (significant()) {
    std::snprintf(numbers, sizeof numbers, " (p=%.2g, %zu vs %zu times)", p_value, n_a, n_b);
    char ratio[32];
    std::snprintf(ratio, sizeof ratio, "%.2fx faster than ", speedup);
    return ratio + than + numbers;
  }
  std::snprintf(numbers, sizeof numbers, " (%.2fx, p=%.2g, %zu vs %zu times)", speedup, p_value,
                n_a, n_b);
  return "within noise of " + than + numbers;
}

}  // namespace kiln::tuner
