// Dense (matrix multiply): C[M, N] = A[M, K] · B[K, N].
// Inputs may be f32, f16 or bf16; products accumulate in f32 and the result is stored in
// the output type, so half-precision kernels lose nothing to the accumulation order.
#pragma once

#include <cstdint>

#include "te/tensor.h"

namespace kiln::schedules {

struct DenseShape {
  int64_t m, n, k;
  double flops() const { return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k); }
};

struct DenseOp {
  te::Tensor a, b, c;
};

DenseOp dense_compute(const DenseShape& s, ir::DataType in = ir::DataType::f32(),
                      ir::DataType out = ir::DataType::f32());

// Plain reference (double accumulation) on f32 values.
void dense_reference(const DenseShape& s, const float* a, const float* b, float* c);

}  // namespace kiln::schedules
