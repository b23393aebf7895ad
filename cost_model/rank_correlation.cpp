#include "cost_model/rank_correlation.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "compiler/base/error.h"

namespace kiln::cost_model {

std::vector<double> ranks(const std::vector<double>& values) {
  std::vector<size_t> order(values.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return values[a] < values[b]; });
  std::vector<double> r(values.size());
  for (size_t begin = 0; begin < order.size();) {
    size_t end = begin;
    while (end < order.size() && values[order[end]] == values[order[begin]]) ++end;
    double mean_rank = (begin + 1 + end) / 2.0;  // ranks begin+1 .. end
    for (size_t i = begin; i < end; ++i) r[order[i]] = mean_rank;
    begin = end;
  }
  return r;
}

double spearman(const std::vector<double>& a, const std::vector<double>& b) {
  user_check(a.size() == b.size()) << "spearman: " << a.size() << " values against " << b.size();
  user_check(a.size() >= 2) << "spearman needs at least 2 pairs, got " << a.size();
  // Pearson's correlation of the ranks (exact with ties, unlike the 1 - 6 sum d^2 formula).
  std::vector<double> ra = ranks(a), rb = ranks(b);
  const double mean = (a.size() + 1) / 2.0;
  double cov = 0, va = 0, vb = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    cov += (ra[i] - mean) * (rb[i] - mean);
    va += (ra[i] - mean) * (ra[i] - mean);
    vb += (rb[i] - mean) * (rb[i] - mean);
  }
  if (va == 0 || vb == 0) return 0;
  return cov / std::sqrt(va * vb);
}

}  // namespace kiln::cost_model
