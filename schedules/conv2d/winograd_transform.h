// Winograd minimal-filtering transforms F(m, r), generated from Cook-Toom interpolation
// points instead of typed-in tables, so every output tile size uses the same construction.
//
// 1-D correlation of an input tile d (alpha = m + r - 1 values) with a filter g (r values),
//   y[i] = Σ_k d[i + k] g[k],  i < m,
// is  y = A^T [(G g) ⊙ (B^T d)];  in 2-D  Y = A^T [(G g G^T) ⊙ (B^T d B)] A.
// Construction (Toom-Cook on the transposed linear convolution): alpha - 1 finite points
// f_j plus the point at infinity; M(x) = Π_j (x - f_j), N_j = Π_{l≠j} (f_j - f_l).
//   A^T[i][j] = f_j^i                 (last column: 1 in row m - 1, the point at infinity)
//   G[j][k]   = f_j^k / N_j           (last row: 1 in column r - 1)
//   B^T row j = coefficients of M(x) / (x - f_j), ascending powers; last row: those of M(x)
// Everything is computed in double; kernels use the values rounded to f32.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace kiln::schedules {

// A dense row-major matrix of doubles.
struct Matrix {
  int64_t rows = 0, cols = 0;
  std::vector<double> v;
  double operator()(int64_t i, int64_t j) const { return v[static_cast<size_t>(i * cols + j)]; }
  double& operator()(int64_t i, int64_t j) { return v[static_cast<size_t>(i * cols + j)]; }
};

struct WinogradTransform {
  int64_t m = 0, r = 0, alpha = 0;
  Matrix at;  // A^T: m x alpha, output transform
  Matrix g;   // G:   alpha x r, filter transform
  Matrix bt;  // B^T: alpha x alpha, input transform
};

// F(m, r) from the alpha - 1 = m + r - 2 distinct finite `points`. UserError when the count
// is wrong or two points coincide.
WinogradTransform winograd_transform(int64_t m, int64_t r, const std::vector<double>& points);

// The points kiln uses for F(m, 3), m in {2, 4, 6}: small magnitudes and reciprocal pairs,
// which keep the transforms' entries (and so the rounding error they amplify) small.
const std::vector<double>& winograd_points(int64_t m);

// F(m, 3) from winograd_points(m).
const WinogradTransform& winograd_f3(int64_t m);

}  // namespace kiln::schedules
