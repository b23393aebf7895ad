// The Winograd transforms generated from Cook-Toom points (schedules/conv2d/winograd_transform.h):
// 1-D and 2-D correlation through them is exact (to double rounding) on random data for
// every tile size kiln uses and for other point sets; F(2, 3) matches the published
// matrices up to the scaling of each transformed position; bad point sets are user errors.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "compiler/base/error.h"
#include "schedules/conv2d/winograd_transform.h"

namespace kiln::schedules {
namespace {

std::vector<double> random_vector(int64_t n, std::mt19937& rng) {
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> v(static_cast<size_t>(n));
  for (double& x : v) x = u(rng);
  return v;
}

// y = A^T [(G g) ⊙ (B^T d)]
std::vector<double> correlate_1d(const WinogradTransform& t, const std::vector<double>& d,
                                 const std::vector<double>& g) {
  std::vector<double> prod(static_cast<size_t>(t.alpha));
  for (int64_t j = 0; j < t.alpha; ++j) {
    double u = 0, v = 0;
    for (int64_t k = 0; k < t.r; ++k) u += t.g(j, k) * g[k];
    for (int64_t k = 0; k < t.alpha; ++k) v += t.bt(j, k) * d[k];
    prod[j] = u * v;
  }
  std::vector<double> y(static_cast<size_t>(t.m), 0.0);
  for (int64_t i = 0; i < t.m; ++i)
    for (int64_t j = 0; j < t.alpha; ++j) y[i] += t.at(i, j) * prod[j];
  return y;
}

void expect_exact_1d(const WinogradTransform& t, uint32_t seed) {
  std::mt19937 rng(seed);
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<double> d = random_vector(t.alpha, rng), g = random_vector(t.r, rng);
    std::vector<double> y = correlate_1d(t, d, g);
    for (int64_t i = 0; i < t.m; ++i) {
      double want = 0;
      for (int64_t k = 0; k < t.r; ++k) want += d[i + k] * g[k];
      EXPECT_NEAR(y[i], want, 1e-10) << "F(" << t.m << ", " << t.r << ") output " << i;
    }
  }
}

TEST(WinogradTransform, OneDimensionalCorrelationIsExact) {
  for (int64_t m : {2, 4, 6}) expect_exact_1d(winograd_f3(m), 7 + uint32_t(m));
  // Other sizes and point sets through the same construction.
  expect_exact_1d(winograd_transform(3, 3, {0, 1, -1, 2}), 1);
  expect_exact_1d(winograd_transform(2, 5, {0, 1, -1, 2, -2}), 2);
  expect_exact_1d(winograd_transform(4, 3, {0, 1, -1, 2, -2}), 3);
  expect_exact_1d(winograd_transform(1, 1, {}), 4);
}

TEST(WinogradTransform, TwoDimensionalCorrelationIsExact) {
  const WinogradTransform& t = winograd_f3(4);
  std::mt19937 rng(5);
  std::vector<double> d = random_vector(t.alpha * t.alpha, rng), g = random_vector(9, rng);
  const int64_t a = t.alpha;
  // U = G g G^T, V = B^T d B, Y = A^T (U ⊙ V) A.
  std::vector<double> u(a * a, 0.0), v(a * a, 0.0), y(t.m * t.m, 0.0);
  for (int64_t i = 0; i < a; ++i)
    for (int64_t j = 0; j < a; ++j)
      for (int64_t k = 0; k < 3; ++k)
        for (int64_t l = 0; l < 3; ++l) u[i * a + j] += t.g(i, k) * g[k * 3 + l] * t.g(j, l);
  for (int64_t i = 0; i < a; ++i)
    for (int64_t j = 0; j < a; ++j)
      for (int64_t k = 0; k < a; ++k)
        for (int64_t l = 0; l < a; ++l) v[i * a + j] += t.bt(i, k) * d[k * a + l] * t.bt(j, l);
  for (int64_t yi = 0; yi < t.m; ++yi)
    for (int64_t xi = 0; xi < t.m; ++xi)
      for (int64_t i = 0; i < a; ++i)
        for (int64_t j = 0; j < a; ++j)
          y[yi * t.m + xi] += t.at(yi, i) * u[i * a + j] * v[i * a + j] * t.at(xi, j);
  for (int64_t yi = 0; yi < t.m; ++yi)
    for (int64_t xi = 0; xi < t.m; ++xi) {
      double want = 0;
      for (int64_t k = 0; k < 3; ++k)
        for (int64_t l = 0; l < 3; ++l) want += d[(yi + k) * a + xi + l] * g[k * 3 + l];
      EXPECT_NEAR(y[yi * t.m + xi], want, 1e-10);
    }
}

// Lavin & Gray's F(2, 3): B^T, G, A^T. Transformed position j may be scaled by s_j in B^T's
// row j, by t_j in G's row j and by u_j in A^T's column j whenever s_j t_j u_j = 1.
TEST(WinogradTransform, F2MatchesPublishedMatricesUpToScaling) {
  const double bt[4][4] = {{1, 0, -1, 0}, {0, 1, 1, 0}, {0, -1, 1, 0}, {0, 1, 0, -1}};
  const double g[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
  const double at[2][4] = {{1, 1, 1, 0}, {0, 1, -1, -1}};
  const WinogradTransform& t = winograd_f3(2);
  ASSERT_EQ(t.alpha, 4);
  // The scale of a row or column: the ratio at its first nonzero published entry.
  auto scale = [](auto ours, auto published, int64_t n) {
    for (int64_t k = 0; k < n; ++k)
      if (published(k) != 0) return ours(k) / published(k);
    return 0.0;
  };
  for (int64_t j = 0; j < 4; ++j) {
    double s = scale([&](int64_t k) { return t.bt(j, k); }, [&](int64_t k) { return bt[j][k]; }, 4);
    double u = scale([&](int64_t k) { return t.g(j, k); }, [&](int64_t k) { return g[j][k]; }, 3);
    double v = scale([&](int64_t i) { return t.at(i, j); }, [&](int64_t i) { return at[i][j]; }, 2);
    EXPECT_DOUBLE_EQ(s * u * v, 1.0) << "position " << j;
    for (int64_t k = 0; k < 4; ++k) EXPECT_DOUBLE_EQ(t.bt(j, k), s * bt[j][k]) << j << "," << k;
    for (int64_t k = 0; k < 3; ++k) EXPECT_DOUBLE_EQ(t.g(j, k), u * g[j][k]) << j << "," << k;
    for (int64_t i = 0; i < 2; ++i) EXPECT_DOUBLE_EQ(t.at(i, j), v * at[i][j]) << i << "," << j;
  }
}

TEST(WinogradTransform, BadPointsAreUserErrors) {
  EXPECT_THROW(winograd_transform(4, 3, {0, 1, -1}), UserError);         // too few points
  EXPECT_THROW(winograd_transform(2, 3, {0, 1, 1}), UserError);          // repeated point
  EXPECT_THROW(winograd_transform(0, 3, {}), UserError);                 // no output
  EXPECT_THROW(winograd_points(3), UserError);                           // no point set
}

}  // namespace
}  // namespace kiln::schedules
