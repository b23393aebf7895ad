// conv2d by Winograd minimal filtering: conv2d.winograd, for 3x3 kernels, stride 1,
// dilation 1, groups 1, any padding, f32 (and f16 on AArch64 +fullfp16, below), in the
// blocked layout NCHW[x]c of the direct conv2d templates (data [N, C/ic_bn, H, W, ic_bn],
// output [N, O/oc_bn, OH, OW, oc_bn]), so a network can swap it for conv2d.nchwc without
// any layout conversion.
//
// With output tiles of m x m (alpha = m + 2), T tiles over the output, F(m, 3) from
// winograd_transform.h:
//   input transform   V[ξ, ν, cb, t, ci] = (B^T d_t B)[ξ, ν]    d_t: the alpha x alpha input
//                     window of tile t, read from a zero-padded copy of the data
//   batched GEMM      M[ξ, ν, ob, t, oc] = Σ_c V[ξ, ν, c, t] U[ξ, ν, c, oc]   alpha^2 GEMMs,
//                     register-blocked like dense.packed (mr tiles x oc_bn channels)
//   output transform  out[n, ob, y, x, oc] = epilogue((A^T M_t A)[y mod m, x mod m])
// U = G g G^T is the weight's pack function: computed once, at compile time, in double.
// The transforms are separable, each applied as two 1-D passes whose constant coefficients
// are spelled into the expression (zeros dropped) once the small loops are unrolled.
//
// Accuracy: the transforms amplify f32 rounding, more for larger m (their entries and the
// number of terms grow). The template's tolerance is the f32 one scaled by the growth
// measured for the largest m its space offers (winograd_error_scale); a tile size whose
// expected error (which grows with the input channels) would not fit is not offered, and
// applies() is false where none is.
//
// f16 (arm-fp16): data, weights and the transformed input V are stored in f16, so the
// batched GEMM runs `fmla .8h` within each input-channel block and adds the blocks into f32
// (f16_partial_sums.h; knob f16_acc 0 keeps it all in f32). The input and output transforms
// compute in f32 for every m: each output is a sum of alpha^2 GEMM results with
// coefficients up to 8 (F(6)), whose f16 rounding would add to the f16 storage's. Tile
// sizes whose error does not fit f16's 1e-2 are not offered (winograd_expected_error_f16):
// that leaves F(2), since storing V and U in f16 alone costs F(4) 1.2e-2.
#pragma once

#include <cstdint>
#include <vector>

#include "schedules/op_template.h"

namespace kiln::schedules {

const OpTemplate& conv2d_winograd_template();

// Whether a conv2d workload is Winograd's form: 3x3, stride 1, dilation 1, groups 1, f32 or
// f16.
bool winograd_form(const Workload& w);
// Winograd's form on a target that runs its dtype: f32 anywhere, f16 on AArch64 +fullfp16.
bool winograd_supported(const Workload& w, const Target& t);

// f16's (on arm-fp16) likewise, measured (tests/kernels/winograd_f16_test.cpp): the f16
// rounding of the transformed input and weights, amplified by the output transform, flat in
// the channels. Judged against f16's 1e-2, it leaves F(2) only.
double winograd_expected_error_f16(int64_t m, int64_t channels);

// The output tile sizes conv2d.winograd offers for the workload (ascending): m in {2, 4, 6}
// whose error stays acceptable and whose tiles are not mostly padding on this output.
std::vector<int64_t> winograd_tile_choices(const Workload& w);

// The factor on the f32 tolerance (1e-4) that F(m, 3) is judged with: 1, 2 and 5 for
// m = 2, 4, 6. A tile size is offered only where twice its expected error fits in it.
double winograd_error_scale(int64_t m);
// F(m, 3)'s expected max error (kiln's rule: relative to max(1, |want|, rms)) on random
// inputs with `channels` input channels, from the measured table in bench/README.md.
double winograd_expected_error(int64_t m, int64_t channels);

// The fallback's output tile for the workload: F(4) where the output has enough tiles to
// reuse its larger transformed weights, else F(2) (or the one size offered).
int64_t winograd_fallback_tile(const Workload& w);
// conv2d.winograd's fallback config with output tile `m` (its fallback is this with
// winograd_fallback_tile): the register tile and channel blocks picked for that m.
Config winograd_fallback(const Workload& w, const Target& t, int64_t m);

// The cost rule for untuned networks: whether conv2d.winograd (its fallback) beats the
// direct conv2d.nchwc (its fallback) on this workload and target, from the measured table in
// bench/README.md. False for workloads that are not Winograd's form, and for f16 (not yet
// timed on ARM hardware).
bool winograd_preferred(const Workload& w, const Target& t);

}  // namespace kiln::schedules
