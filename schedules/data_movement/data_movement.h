// Data movement: concat, transpose, pad, slice and reshape/flatten — kernels that only move
// elements (any dtype of f32, f16, bf16; values are copied bit for bit, never converted).
//
// Workloads (shapes of up to 5 dimensions; "ndim" counts them, D0..D{ndim-1} name them):
//   "concat":    ndim, axis, inputs (1..kMaxConcatInputs), D0.. the output shape except
//                along `axis` (any value there is ignored), E0..E{inputs-1} each input's
//                extent along it.
//   "transpose": ndim, D0.. the input shape, P0.. the permutation (output dim i is input
//                dim P_i, as numpy.transpose).
//   "pad":       ndim, D0.. the input shape, B0.. / A0.. the padding before / after each
//                dim (>= 0), value: the constant (a real; default 0).
//   "slice":     ndim, D0.. the input shape, S0.. the first element taken along each dim
//                (>= 0), T0.. the step (>= 1), O0.. the output shape: Y[i] = X[S + i * T]
//                (ONNX Slice with positive steps, Split's parts, Gather of one index).
//   "reshape":   ndim, D0.. the input shape, ondim, O0.. the output shape (same element
//                count). A copy kernel: in row-major memory a reshape moves nothing, so the
//                graph compiler aliases the buffers and emits no kernel whenever the
//                producer's layout allows it; this kernel is for when it does not (e.g. a
//                blocked NCHW[x]c producer).
#pragma once

#include "schedules/op_template.h"

namespace kiln::schedules {

// The most inputs one concat kernel takes: DenseNet's blocks concatenate all their layers'
// outputs at once (up to 33 in DenseNet-201). One input is a copy.
inline constexpr int64_t kMaxConcatInputs = 64;

// "concat.copy": per row of the dimensions before `axis`, each input's contiguous run (its
// extent times the dimensions after `axis`) copied by whole vectors into its place in the
// output row: no per-element choice of the input. Rows parallel, or the runs' blocks when
// there is a single row (a batch-1 channel concat).
const OpTemplate& concat_template();
// "transpose.tiled": the output's innermost loop vectorized (contiguous stores), tiled with
// the loop that walks the input's innermost dimension so both sides stay in cache.
const OpTemplate& transpose_template();
// "pad.constant": the output's innermost loop vectorized; the select is removed from the
// interior by loop partitioning.
const OpTemplate& pad_template();
// "slice.strided": the output's innermost loop vectorized (a gather when that step is not 1).
const OpTemplate& slice_template();
// "reshape.copy": a flat vectorized copy.
const OpTemplate& reshape_template();

// Whether a copy of `elements` values of `dtype` takes threads: from 256 KiB. A copy smaller
// than that sits in the L2 of the core that wrote it, and split among threads half of it
// crosses to another core and back (ShuffleNet-V2's shuffles ran 1.8-2.6x slower at 2 threads
// than at 1 from 64 KiB on; bench/README.md). The layout conversions' rule too.
bool copy_worth_threads(int64_t elements, ir::DataType dtype);

// A transpose workload's shapes (the "transpose" parameters above, checked), shared with
// transpose.shuffle (schedules/data_movement/transpose_shuffle.h).
struct TransposeShape {
  std::vector<int64_t> in, perm, out;
};
TransposeShape transpose_shape(const Workload& w);
// Y = X transposed, element by element.
Values transpose_reference(const TransposeShape& s, const Values& x);
// The placeholder X (s.in, `dtype`) and the compute Y = X transposed (s.out), for a schedule.
struct TransposeTensors {
  te::Tensor x, y;
};
TransposeTensors transpose_compute(const TransposeShape& s, ir::DataType dtype);

}  // namespace kiln::schedules
