// Activation ranges for post-training quantization (calibrate_ranges.h).
#include "compiler/graph/calibrate_ranges.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "compiler/graph/evaluate.h"

namespace kiln::graph {

namespace {

using Ranges = std::map<std::string, std::pair<double, double>>;
using Calibration = std::vector<std::map<std::string, HostTensor>>;

// Each value of `g` in `values` on every calibration set (the reference evaluator), to `see`.
template <typename See>
void for_each_value(Graph g, const std::set<std::string>& values, const Calibration& calibration,
                    See see) {
  g.outputs.assign(values.begin(), values.end());
  for (const auto& inputs : calibration)
    for (const auto& [name, t] : evaluate(g, inputs)) see(name, t.to_f64());
}

Ranges min_max_of(const Graph& g, const std::set<std::string>& values,
                  const Calibration& calibration) {
  Ranges out;
  for_each_value(g, values, calibration,
                 [&](const std::string& name, const std::vector<double>& v) {
                   auto [it, fresh] = out.try_emplace(name, std::numeric_limits<double>::infinity(),
                                                      -std::numeric_limits<double>::infinity());
                   for (double x : v)
                     it->second = {std::min(it->second.first, x), std::max(it->second.second, x)};
                 });
  return out;
}

// A second pass counting each value into `bins` equal bins over [from(lo, hi), to(lo, hi)] of
// its min-max range, x mapped by `key` first (x itself, or |x|).
template <typename Key>
std::map<std::string, std::vector<uint64_t>> histograms_of(const Graph& g,
                                                           const std::set<std::string>& values,
                                                           const Calibration& calibration,
                                                           const Ranges& range, size_t bins,
                                                           Key key) {
  std::map<std::string, std::vector<uint64_t>> hist;
  for_each_value(g, values, calibration,
                 [&](const std::string& name, const std::vector<double>& v) {
                   const auto [from, to] = key.span(range.at(name));
                   std::vector<uint64_t>& h = hist.try_emplace(name, bins, 0).first->second;
                   const double width = to > from ? (to - from) / bins : 1;
                   for (double x : v)
                     if (!key.skip(x))
                       h[std::min(bins - 1, static_cast<size_t>((key(x) - from) / width))]++;
                 });
  return hist;
}

struct Identity {
  double operator()(double x) const { return x; }
  bool skip(double) const { return false; }
  std::pair<double, double> span(std::pair<double, double> r) const { return r; }
};
// Exact zeros are left out: 0.0 is exact in any range that holds it, and after a Relu they are
// half the values, a spike in the first bin that would pull the threshold down to where the
// first quantization step is one bin wide.
struct Magnitude {
  double operator()(double x) const { return std::fabs(x); }
  bool skip(double x) const { return x == 0; }
  std::pair<double, double> span(std::pair<double, double> r) const {
    return {0.0, std::max(std::fabs(r.first), std::fabs(r.second))};
  }
};

// The (100 - p)th and p-th percentiles: the edges of the bins where the counts cross them (at
// most a bin's width, 1/4096 of the range, beyond the exact ones).
Ranges percentiles_of(const Graph& g, const std::set<std::string>& values,
                      const Calibration& calibration, double p) {
  constexpr size_t kBins = 4096;
  const Ranges range = min_max_of(g, values, calibration);
  Ranges out;
  for (const auto& [name, h] : histograms_of(g, values, calibration, range, kBins, Identity{})) {
    const auto [lo, hi] = range.at(name);
    const double width = hi > lo ? (hi - lo) / kBins : 0;
    uint64_t total = 0;
    for (uint64_t c : h) total += c;
    const double tail = total * (100 - p) / 100;
    size_t first = 0, last = kBins - 1;
    for (double below = 0; first < kBins - 1 && below + h[first] <= tail; ++first)
      below += h[first];
    for (double above = 0; last > first && above + h[last] <= tail; --last) above += h[last];
    out[name] = {lo + width * first, lo + width * (last + 1)};
  }
  return out;
}

Ranges entropy_of(const Graph& g, const std::set<std::string>& values,
                  const Calibration& calibration) {
  constexpr size_t kBins = 2048;
  const Ranges range = min_max_of(g, values, calibration);
  Ranges out;
  for (const auto& [name, h] : histograms_of(g, values, calibration, range, kBins, Magnitude{})) {
    const auto [lo, hi] = range.at(name);
    const double amax = Magnitude{}.span(range.at(name)).second;
    const double t = entropy_threshold(h, amax, lo >= 0 ? 255 : 127);
    out[name] = {std::max(lo, -t), std::min(hi, t)};
  }
  return out;
}

// Sum of p log(p / q) over the bins where p > 0, both normalised; a q of 0 where p is not
// (a bin the quantized distribution cannot represent) counts as a tiny q.
double kl_divergence(const std::vector<double>& p, const std::vector<double>& q) {
  double sp = 0, sq = 0;
  for (size_t i = 0; i < p.size(); ++i) sp += p[i], sq += q[i];
  double kl = 0;
  for (size_t i = 0; i < p.size(); ++i) {
    if (p[i] <= 0) continue;
    const double pi = p[i] / sp, qi = std::max(q[i] / sq, 1e-12);
    kl += pi * std::log(pi / qi);
  }
  return kl;
}

}  // namespace

double entropy_threshold(const std::vector<uint64_t>& hist, double amax, int levels) {
  const size_t bins = hist.size();
  const size_t steps = static_cast<size_t>(levels);
  if (bins <= steps || amax <= 0) return amax;
  const double width = amax / bins;
  double best_kl = std::numeric_limits<double>::infinity();
  size_t best = bins;
  for (size_t i = steps; i <= bins; ++i) {
    // P: the first i bins, everything beyond folded into the last (what clipping at i does).
    std::vector<double> p(hist.begin(), hist.begin() + i);
    for (size_t k = i; k < bins; ++k) p[i - 1] += hist[k];
    // Q: the first i bins merged into `steps` groups (what the quantizer can tell apart), each
    // group's count spread evenly back over its non-empty bins.
    std::vector<double> q(i, 0.0);
    for (size_t s = 0; s < steps; ++s) {
      const size_t from = s * i / steps, to = (s + 1) * i / steps;
      double count = 0;
      size_t used = 0;
      for (size_t k = from; k < to; ++k) count += hist[k], used += hist[k] > 0;
      for (size_t k = from; k < to; ++k) q[k] = hist[k] > 0 ? count / used : 0;
    }
    const double kl = kl_divergence(p, q);
    if (kl < best_kl) best_kl = kl, best = i;
  }
  return width * best;
}

std::map<std::string, std::pair<double, double>> calibrate_ranges(
    const Graph& g, const std::set<std::string>& values, const Calibration& calibration,
    const RangeOptions& options) {
  switch (options.method) {
    case RangeMethod::kPercentile:
      return percentiles_of(g, values, calibration, options.percentile);
    case RangeMethod::kEntropy:
      return entropy_of(g, values, calibration);
    case RangeMethod::kMinMax:
      break;
  }
  return min_max_of(g, values, calibration);
}

}  // namespace kiln::graph
