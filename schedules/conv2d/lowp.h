// Low-precision conv2d: the NCHW[x]c register tile of "conv2d.nchwc" (schedules/conv2d/nchwc.cpp)
// with half-precision data and weights, through the instructions that make it pay.
//
//   conv2d.bf16.x86  bf16 on x86 with avx512bf16, groups 1. The input-channel block is split
//                    into pairs: data NCHW[ic_bn]c (ic_bn even; an odd C is zero-padded), so
//                    the two adjacent channels of one pixel are one 32-bit value to
//                    broadcast; weights packed [O/oc_bn][C/ic_bn][KH][KW][ic_bn/2][oc_bn][2]
//                    (VNNI pairs). Per pair of channels and tap: oc_bn/16 weight loads and
//                    reg_n x oc_bn/16 `vdpbf16ps zmm` into f32 accumulators kept in registers
//                    (the pair loop is tensorized). Output bf16, or f32 with param out_f32=1.
//   conv2d.bf16.arm  bf16 on AArch64 with +bf16, groups 1: the same packed layouts and pair
//                    loop through BFDOT (`bfdot v.4s, v.8h, v.8h`) on 4-lane f32
//                    accumulators; oc_bn 4, 8 or 16 (1, 2 or 4 q registers per pixel).
//   conv2d.f16.arm   f16 on AArch64 with +fullfp16, groups 1: the f32 template's register
//                    tile over 8-lane vectors; knob f16_acc 2 (default) accumulates in f16
//                    with `fmla .8h` within blocks of the reduction (knob f16_block: the
//                    channel block, times KW, times KH) and adds each block into f32
//                    (f16_partial_sums.h); 1 all in f16 (looser error); 0 all in f32.
// All three fuse the epilogues of epilogue.h (bias, relu, relu6, residual, ...) into the output
// pass. Logical arguments stay NCHW / OIHW through KernelArg::pack/unpack.
#pragma once

#include <cstdint>

#include "schedules/conv2d/common.h"
#include "schedules/intrinsics.h"
#include "schedules/op_template.h"

namespace kiln::schedules {

const OpTemplate& conv2d_bf16_x86_template();
const OpTemplate& conv2d_bf16_arm_template();
const OpTemplate& conv2d_f16_arm_template();

// Logical OIHW weights -> [ceil(O/ocb)][ceil(C/icb)][KH][KW][icb/2][ocb][2], zero-padded
// (icb even, groups 1): one 64-byte load gives `vdpbf16ps` 16 output channels x 2 inputs,
// one 16-byte load gives BFDOT 4.
Values pack_conv_weight_vnni(const Values& w, const Conv2dParams& p, int64_t icb, int64_t ocb);

// The accumulators of a pair-dot conv over whole tiles of `owp` output pixels:
// acc[n, b, y, x, c] = Σ acc_type(padded) * acc_type(weight) over the channel blocks, taps
// and channel pairs of `padded` (NCHW[icb]c, padding applied) and `weight` (the layout
// above); `reduce` holds the axes rco, ry, rx, rp, rk in that order, for the schedule.
struct PairConvSums {
  te::Tensor acc;
  std::vector<ir::IterVar> reduce;
};
PairConvSums pair_conv_sums(const Conv2dParams& p, const te::Tensor& padded,
                            const te::Tensor& weight, int64_t ob, int64_t ocb, int64_t owp,
                            ir::DataType acc_type);

// All channel pairs of one (channel block, tap) for a reg_n x (nv*lanes) tile of a conv
// whose data is NCHW[icb]c of `pair` values and weights "weight.vnni" (the layout above):
// per pair, nv weight vectors, one broadcast 32-bit channel pair per pixel, `dot` into the
// accumulators; pixels past OW read pixel OW-1. conv2d.bf16.* and conv2d.int8 use it.
te::TensorIntrin conv_pair_dot_tile(const Conv2dParams& p, int64_t reg_n, int64_t nv,
                                    int64_t lanes, int64_t pairs, int64_t ku, int64_t ow,
                                    ir::DataType pair, PairDotFn dot);

}  // namespace kiln::schedules
