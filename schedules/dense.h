// Dense (matrix multiply): C[M, N] = A[M, K] · B[K, N].
// Inputs may be f32, f16 or bf16; products accumulate in f32 and the result is stored in
// the output type, so half-precision kernels lose nothing to the accumulation order.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <vector>

#include "schedules/epilogue.h"
#include "schedules/op_template.h"
#include "compiler/te/schedule.h"

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

// ---- Shared by the dense templates (dense.packed and those of dense_lowp.h) ----------------

// M, N, K of a "dense" workload; UserError unless all are positive.
DenseShape dense_shape(const Workload& w);

// The row-tile (mr) choices of a space: those of `choices` not above max(M, 1).
std::vector<int64_t> row_tile_choices(int64_t m, std::initializer_list<int64_t> choices);
// The largest of `choices` (largest first) not above `want` and M: a row tile the matrix fills.
int64_t fit_rows(int64_t want, int64_t m, std::initializer_list<int64_t> choices);

// C in tiles of mr x nr, vectors of `lanes`, column panels (config panels_outer=1) or row
// blocks outermost, and parallel when config parallel=1. With `unroll_tile` the tile's
// rows and vectors are unrolled. Returns the loop the accumulator tile is computed at.
ir::IterVar schedule_dense_output(te::Schedule& sch, const te::Tensor& c, int64_t mr, int64_t nr,
                                  int64_t lanes, const Config& cfg, bool unroll_tile);
// The accumulator tile `acc` [mr, nr] in registers at `out`'s loop `at`: the reduction
// axes (outermost first; the last split by k_unroll > 1, unrolled) outside the rows, the
// rows and vectors of `lanes` unrolled, the lanes vectorized.
void schedule_dense_tile(te::Schedule& sch, const te::Tensor& acc, const te::Tensor& out,
                         const ir::IterVar& at, int64_t lanes,
                         const std::vector<ir::IterVar>& reduce, int64_t k_unroll);

// The ScheduledKernel of a dense template: A, B, the epilogue's tensors, C; logical
// arguments but for B, which `pack_b` packs into `packed_b_elements`.
ScheduledKernel finish_dense(const OpTemplate& tpl, const Workload& w, te::Schedule sch,
                             const te::Tensor& a, const te::Tensor& b, const EpilogueTensors& ep,
                             const te::Tensor& c, std::function<Values(const Values&)> pack_b,
                             int64_t packed_b_elements);

}  // namespace kiln::schedules
