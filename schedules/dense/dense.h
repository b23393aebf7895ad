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

// ---- Shared by the dense templates (dense.packed and those of lowp.h) ----------------------

// M, N, K of a "dense" workload; UserError unless all are positive.
DenseShape dense_shape(const Workload& w);

// The row-tile (mr) choices of a space: those of `choices` not above max(M, 1).
std::vector<int64_t> row_tile_choices(int64_t m, std::initializer_list<int64_t> choices);
// The largest of `choices` (largest first) not above `want` and M: a row tile the matrix fills.
int64_t fit_rows(int64_t want, int64_t m, std::initializer_list<int64_t> choices);

// How a dense template tiles C, from its config: an mr x nr register tile (vectors of
// `lanes`), column panels (panels_outer=1) or row blocks outermost, and the knobs that
// shape the loops around the tile for other caches and core counts.
struct DenseTiling {
  int64_t mr, nr, lanes;
  bool panels_outer = true;
  // 0: serial; 1: the outermost tile loop in parallel; 2: the second one (more, smaller
  // chunks for many cores or few panels, one parallel region per outer iteration).
  int64_t parallel = 0;
  // K blocking (the KC of GEMM libraries): with kc > 0 or mc_tiles > 1 the accumulators of
  // a block of mc_tiles row tiles x nr live in a local buffer, the K loop is split by kc
  // (0: not split) and runs outside the block's row tiles, so the kc x nr slice of the
  // packed B panel is reused from L1 across them. kc = 0, mc_tiles = 1 is the plain
  // register tile over all of K.
  int64_t kc = 0, mc_tiles = 1;
  int64_t k_unroll = 1;      // the innermost reduction axis split by this and unrolled
  bool unroll_tile = false;  // unroll C's tile loops too (constant offsets for SROA)
  bool blocked() const { return kc > 0 || mc_tiles > 1; }
};

// The tiling a config of a dense template asks for: knobs panels_outer, parallel and, when
// the space has them, kc, mc_tiles and k_unroll.
DenseTiling dense_tiling(const Config& cfg, int64_t mr, int64_t nr, int64_t lanes);

// The dense knobs that shape the loops around the register tile (the DenseTiling fields),
// for a space over M x K: loop order, parallel granularity, K block and row tiles per block.
void define_dense_loop_knobs(ConfigSpace& cs, const DenseShape& s);

// C's loops for `t` (tile rows and vectors unrolled with unroll_tile; parallel as asked).
// Returns the loop the accumulator stage is computed at.
ir::IterVar schedule_dense_output(te::Schedule& sch, const te::Tensor& c, const DenseTiling& t);
// The accumulator stage `acc` [mr, nr] (or [mc_tiles * mr, nr] when blocked) at `out`'s
// loop `at`: the reduction axes (outermost first; the first split by kc when blocked, the
// last by k_unroll > 1, unrolled) outside the rows, the rows and vectors unrolled, the
// lanes vectorized. When blocked, the K block loop runs outside the block's row tiles.
void schedule_dense_tile(te::Schedule& sch, const te::Tensor& acc, const te::Tensor& out,
                         const ir::IterVar& at, const DenseTiling& t,
                         const std::vector<ir::IterVar>& reduce);

// The ScheduledKernel of a dense template: A, B, the epilogue's tensors, C; logical
// arguments but for B, which `pack_b` packs into `packed_b_elements`.
ScheduledKernel finish_dense(const OpTemplate& tpl, const Workload& w, te::Schedule sch,
                             const te::Tensor& a, const te::Tensor& b, const EpilogueTensors& ep,
                             const te::Tensor& c, std::function<Values(const Values&)> pack_b,
                             int64_t packed_b_elements);

}  // namespace kiln::schedules
