// Which template and config the network compiler builds each workload with. Tuned workloads
// take apply-history-best's answer unchanged. For untuned ones (no record) this is the one
// place with the network compiler's fallback rules, because the operator library's default
// for a workload in isolation is not always right inside a network:
//   - a depthwise conv2d (groups == C == O) goes to conv2d.depthwise: the general
//     conv2d.nchwc computes it through block-diagonal weights, groups x the FLOPs and the
//     weight bytes (measured on MobileNetV2's 144-channel 56x56 layer, x86-avx512, 1 thread:
//     35.9 ms against 0.25 ms); with a channel multiplier (O = k * C, k > 1) it goes to
//     conv2d.depthwise_mult for the same reason (C x the FLOPs through conv2d.nchwc);
//   - a 3x3 stride-1 conv goes to conv2d.winograd when schedules::winograd_preferred says so
//     (enough channels and output tiles; measured on ResNet-18's layers: 1.9-2.6x oneDNN's
//     direct conv on the 56x56 and 28x28 ones, see bench/README.md);
//   - 1x1 convolutions with small output planes (up to 14x14: schedules::conv2d_1x1_preferred)
//     go to conv2d.1x1, whose fallback there blocks pixels and K and reads the weights in two
//     streams (MobileNetV2's 7x7 and 14x14 pointwise layers, x86-avx512, 1 thread, in the
//     network: 0.70-0.97x conv2d.nchwc's time); larger ones stay on the library's default
//     (conv2d.nchwc): conv2d.1x1's fallback was not faster on them (0.86-1.0x);
//   - a pooling op whose input a blocked kernel wrote runs in that block (pooling/blocked.h),
//     so no conversion appears around it (ResNet-18's stem max pool cost 1.6 ms with the
//     conversions to NCHW and back, x86-avx512, 1 thread); after an NCHW producer it stays
//     on the NCHW template;
//   - the channel blocks follow the neighbours: a conv reads its input in the block its
//     producer wrote (ic_bn, or c_bn for depthwise) and writes in the block of a fused
//     residual, so consecutive kernels share one NCHW[x]c layout and nothing is converted
//     between them. The register tile is shrunk to keep no more accumulators than the
//     template's own fallback when a wider block is taken.
#pragma once

#include "network/kernel_layout.h"
#include "compiler/target/target.h"
#include "tuner/history_best.h"

namespace kiln::network {

// The layouts the activations around a node are already in (0: logical or not known).
struct NeighbourLayouts {
  Layout input = 0;     // the main data input ("data" of a conv, "X" of a pool)
  Layout residual = 0;  // a fused residual operand
};

tuner::Dispatch choose_template(const schedules::Workload& workload, const Target& target,
                                const tuner::HistoryBest& history,
                                const NeighbourLayouts& neighbours = {});

// The templates a network tune measures for `workload` (extract_tasks.h): every template that
// builds it, the untuned choice first, less those that cannot win. A depthwise conv keeps
// only the depthwise templates: conv2d.nchwc would compute it through block-diagonal
// weights (above), and its FLOPs counted that way made it look like the network's heaviest
// task, so a short tune spent its first trials there and `kiln compile --records` took its
// record, the only one (MobileNetV2, 150 s on an AVX2 machine: 6.4 ms for the 144-channel
// 56x56 stride-2 layer on conv2d.nchwc, and the tuned network 1.6x slower than untuned).
std::vector<const schedules::OpTemplate*> tuning_templates(const schedules::Workload& workload,
                                                          const Target& target);

}  // namespace kiln::network
