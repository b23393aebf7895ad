// The direct conv2d templates (conv2d.nchwc in nchwc.cpp, conv2d.1x1 in one_by_one.cpp,
// conv2d.depthwise in depthwise.cpp) compute in the blocked layout NCHW[x]c (layout.h): data
// [N, C/ic_bn, H, W, ic_bn], weights packed once at compile time, output
// [N, O/oc_bn, OH, OW, oc_bn]; the test-facing arguments stay logical through
// KernelArg::pack/unpack. This header holds what those three share beyond the blocked
// pieces of blocked.h: their base DirectConv2dTemplate (the kernel assembly), the blocked
// epilogue stage, the fallbacks' register budget, output-channel vectors and order of
// output blocks, and the channel parts and weight packing of grouped convolutions.
#pragma once

#include <cstdint>
#include <functional>
#include <utility>

#include "compiler/te/tensor.h"
#include "schedules/conv2d/blocked.h"
#include "schedules/conv2d/common.h"
#include "schedules/epilogue.h"

namespace kiln::schedules {

// Vector registers of the target: AVX2 has 16 ymm, AVX-512 32 zmm, AArch64 32 v.
int64_t vector_registers(const Target& t);

// Vectors of output channels per block: `pref`, at most what the channels fill, 2 rather
// than 3 (the spaces offer 1, 2 or 4 vectors: oc_bn_choices), and halved while that pads
// fewer channels (48 channels: three blocks of 16, not two of 32).
int64_t pick_oc_vecs(int64_t pref, int64_t channels, int64_t lanes);

// How a grouped conv's blocked kernel splits its channels into parts, each output block
// reading only the input blocks that hold its part's channels: parts of whole groups, as few
// groups each as the blocks allow. That takes an output block inside one group (ocb dividing
// O / groups) or holding whole groups (O / groups dividing ocb; RegNet's 55 groups of 8 in
// 16-channel blocks leave a last part of one group), and input blocks that divide a part's
// channels or hold whole parts (a network's layout may fix them wider). The weights are
// block-diagonal over the channels a block reads, so the kernel does ocb / (O / groups) times
// icb / part channels times the FLOPs at most (2 for ResNeXt's 4-channel groups in 8-channel
// blocks), where one part of all C channels does `groups` times. One part of all channels when
// the blocks do not fit the groups (or groups is 1): every block reads all C channels.
struct ChannelParts {
  int64_t count = 1;  // parts
  int64_t channels;   // input channels per part (the last part may hold fewer)
  int64_t outputs;    // output channels per part: a whole number of output blocks
};

// One part: every output block reads all C channels.
ChannelParts all_channels(const Conv2dParams& p, int64_t ocb);

ChannelParts channel_parts(const Conv2dParams& p, int64_t icb, int64_t ocb);

// The first input block a part reads, and how many (channel_parts): a part starts at a
// multiple of its channels, so one that divides the block lies inside one block.
int64_t part_first_block(const ChannelParts& parts, int64_t part, int64_t icb);
int64_t part_blocks(const ChannelParts& parts, int64_t icb);

// Weights OIHW (O x C/groups x KH x KW) -> [O/ocb, part_blocks, KH, KW, icb, ocb],
// zero-padded, each output block over the input blocks its part reads (channel_parts).
// Grouped weights are block-diagonal over those blocks' channels.
Values pack_conv_weight(const Values& wv, const Conv2dParams& p, int64_t icb, int64_t ocb,
                        const ChannelParts& parts);

// The fallback's loop order of output blocks (TileKnobs::oc_inner): outermost (0) unless
// the input is large and many output blocks would each stream all of it again. With the
// blocks outermost, every block walks the whole input, C / icb channel blocks far apart in
// memory; once the input is past the caches this runs at the latency of those scattered
// streams, not at the FMA rate. Blocks inside the W tiles (2) read each input tile once
// from memory and reuse it from L1 for every block, at the price of walking the weights
// per tile (from L2). Measured (AMD Zen 3, AVX2, conv2d.nchwc, 1 and 2 threads): SegFormer's
// 1024->256 1x1 on 56x56 13 -> 68 GFLOPS at 1 thread, DeepLab's 1280->256 1x1 on 33x33
// 9 -> 45, a 256->256 3x3 on 56x56 55 -> 74; inputs of 0.8 MB (ResNet-18's first stage)
// or few channel blocks (32 channels on 224x224) gain nothing, so they keep the order.
int64_t pick_oc_inner(const Conv2dParams& p, int64_t ocb, int64_t elem_bytes);

// Base of the direct conv2d templates: the shared conv2d interface (common.h) plus the
// kernel assembly of the blocked ones.
class DirectConv2dTemplate : public Conv2dTemplate {
 protected:
  // The kernel (data, weight, the epilogue's tensors, out) of a blocked template, its
  // arguments logical outside (blocked_conv_args).
  ScheduledKernel finish_blocked(const Workload& w, const Conv2dParams& p, te::Schedule sch,
                                 const te::Tensor& data, const te::Tensor& weight,
                                 const EpilogueTensors& ep, const te::Tensor& out, int64_t icb,
                                 int64_t ocb, std::function<Values(const Values&)> pack_w,
                                 int64_t weight_elements) const {
    return {
        std::move(sch), with_epilogue_args({data, weight}, ep, out),
        blocked_conv_args(inputs(w), output(w), p, icb, ocb, std::move(pack_w), weight_elements),
        p.flops()};
  }
};

// out = cast(epilogue(acc)) over a blocked output [..., ocb] whose axis 1 is the block.
te::Tensor blocked_epilogue(const Workload& w, const EpilogueTensors& ep, const te::Tensor& acc,
                            int64_t ocb);

}  // namespace kiln::schedules
