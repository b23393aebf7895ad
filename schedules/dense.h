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

// Dense with B pre-packed into panels of `nr` columns, contiguous along K:
// packed[N/nr (rounded up)][K][nr], zero-padded past N. Weights are constants in a network,
// so packing happens once at compile time and the kernel reads B sequentially.
DenseOp dense_packed_compute(const DenseShape& s, int64_t nr, ir::DataType in = ir::DataType::f32(),
                             ir::DataType out = ir::DataType::f32());
std::vector<float> pack_dense_b(const DenseShape& s, int64_t nr, const float* b);

// A register-blocked schedule for the packed form: an mr x nr tile of C accumulates in
// registers over all of K (nr a multiple of `lanes`, the target's f32 vector width),
// column panels outermost and parallel.
struct RegisterTile {
  int64_t mr = 8, nr = 32, lanes = 16, k_unroll = 1;
};
void schedule_dense_register_tile(te::Schedule& s, const DenseOp& op, const RegisterTile& t);

// The tunable template "dense.packed" (see op_template.h): B packed in panels at compile
// time, an mr x nr register tile over all of K, fused epilogue and output cast. Workload
// params M, N, K; dtypes f32, f16, bf16 (f32 accumulation, output in the input type).
const OpTemplate& dense_packed_template();

// Plain reference (double accumulation) on f32 values.
void dense_reference(const DenseShape& s, const float* a, const float* b, float* c);

}  // namespace kiln::schedules
