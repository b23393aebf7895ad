// Dense (matrix multiply): C[M, N] = A[M, K] · B[K, N].
// Inputs may be f32, f16 or bf16; products accumulate in f32 and the result is stored in
// the output type, so half-precision kernels lose nothing to the accumulation order.
#pragma once

#include <cstdint>
#include <vector>

#include "schedules/op_template.h"
#include "te/schedule.h"

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

// B in panels of `nr` columns, contiguous along K: packed[N/nr (rounded up)][K][nr],
// zero-padded past N. Weights are constants in a network, so packing happens once at
// compile time and the kernel reads B sequentially.
std::vector<float> pack_dense_b(const DenseShape& s, int64_t nr, const float* b);

// The tunable template "dense.packed" (see op_template.h): B packed in panels at compile
// time, an mr x nr register tile over all of K, fused epilogue and output cast. Workload
// params M, N, K; dtypes f32, f16, bf16 (f32 accumulation, output in the input type).
const OpTemplate& dense_packed_template();

// Plain reference (double accumulation) on f32 values.
void dense_reference(const DenseShape& s, const float* a, const float* b, float* c);

}  // namespace kiln::schedules
