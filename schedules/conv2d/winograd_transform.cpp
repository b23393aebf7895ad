#include "schedules/conv2d/winograd_transform.h"

#include <cmath>
#include <map>
#include <mutex>

#include "compiler/base/error.h"

namespace kiln::schedules {

namespace {

Matrix zeros(int64_t rows, int64_t cols) {
  return Matrix{rows, cols, std::vector<double>(static_cast<size_t>(rows * cols), 0.0)};
}

// Coefficients (ascending powers) of Π_{j in points, j != skip} (x - f_j).
std::vector<double> product_poly(const std::vector<double>& points, size_t skip) {
  std::vector<double> c = {1.0};
  for (size_t j = 0; j < points.size(); ++j) {
    if (j == skip) continue;
    std::vector<double> next(c.size() + 1, 0.0);
    for (size_t k = 0; k < c.size(); ++k) {
      next[k + 1] += c[k];
      next[k] -= points[j] * c[k];
    }
    c = std::move(next);
  }
  return c;
}

}  // namespace

WinogradTransform winograd_transform(int64_t m, int64_t r, const std::vector<double>& points) {
  user_check(m >= 1 && r >= 1) << "winograd: F(m, r) needs m >= 1 and r >= 1, got F(" << m
                               << ", " << r << ")";
  const int64_t alpha = m + r - 1;
  user_check(static_cast<int64_t>(points.size()) == alpha - 1)
      << "winograd: F(" << m << ", " << r << ") needs " << alpha - 1
      << " finite interpolation points, got " << points.size();
  for (size_t i = 0; i < points.size(); ++i)
    for (size_t j = i + 1; j < points.size(); ++j)
      user_check(points[i] != points[j])
          << "winograd: interpolation points must be distinct, " << points[i] << " repeats";

  WinogradTransform t{m, r, alpha, zeros(m, alpha), zeros(alpha, r), zeros(alpha, alpha)};
  const size_t none = points.size();
  for (int64_t j = 0; j + 1 < alpha; ++j) {
    const double f = points[static_cast<size_t>(j)];
    double norm = 1.0;  // N_j
    for (size_t l = 0; l < points.size(); ++l)
      if (static_cast<int64_t>(l) != j) norm *= f - points[l];
    for (int64_t i = 0; i < m; ++i) t.at(i, j) = std::pow(f, double(i));
    for (int64_t k = 0; k < r; ++k) t.g(j, k) = std::pow(f, double(k)) / norm;
    std::vector<double> row = product_poly(points, static_cast<size_t>(j));
    for (size_t k = 0; k < row.size(); ++k) t.bt(j, static_cast<int64_t>(k)) = row[k];
  }
  // The point at infinity: the top coefficient of the product, known without evaluation.
  t.at(m - 1, alpha - 1) = 1.0;
  t.g(alpha - 1, r - 1) = 1.0;
  std::vector<double> full = product_poly(points, none);
  for (size_t k = 0; k < full.size(); ++k) t.bt(alpha - 1, static_cast<int64_t>(k)) = full[k];
  return t;
}

const std::vector<double>& winograd_points(int64_t m) {
  static const std::map<int64_t, std::vector<double>> k = {
      {2, {0, 1, -1}},
      {4, {0, 1, -1, 0.5, -2}},
      {6, {0, 1, -1, 0.5, -0.5, 2, -2}},
  };
  auto it = k.find(m);
  user_check(it != k.end()) << "winograd: output tile m must be 2, 4 or 6 for a 3x3 filter, got "
                            << m;
  return it->second;
}

const WinogradTransform& winograd_f3(int64_t m) {
  static std::mutex mu;
  static std::map<int64_t, WinogradTransform> cache;
  const std::vector<double>& points = winograd_points(m);
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(m);
  if (it == cache.end()) it = cache.emplace(m, winograd_transform(m, 3, points)).first;
  return it->second;
}

}  // namespace kiln::schedules
