// The cost model's main feature vector: a lowered kernel's loop-nest statistics
// (loop_nest.h) flattened into a FIXED number of floats, the same layout for every config of
// every task of a template, so one model can learn across them.
//
// Layout (ir_feature_names() spells every entry), in this order:
//  1. kMaxLevels loop levels of the main loop chain, outermost first. A deeper chain keeps
//     its innermost kMaxLevels loops (the outer ones only multiply trips, which the kept
//     levels' `trips` still show); a shallower one leaves the last levels zero. Per level:
//       present, extent, serial, parallel, vectorized, unrolled (the ForKind, one-hot),
//       body_stores, trips,
//     then for each of the kBufferSlots buffer slots:
//       accesses, loop_stride, innermost_stride, touched_bytes, reuse.
//  2. Per buffer slot: present, written, element_bytes.
//  3. Kernel totals: flops, bytes_loaded, bytes_stored, arithmetic_intensity, vector_ops,
//     parallel_extent, vector_width, branches, local_bytes, chain_depth.
// Buffer slots: the first kGlobalSlots kernel arguments that are written (outputs), in call
// order, then the arguments only read, in call order; then kLocalSlots buffers the kernel
// allocates (accumulator tiles, scratch), in order of appearance. A dense kernel's output,
// inputs and register tile thus keep their slots whether or not it has a bias.
// Counts, sizes and extents enter as log2(1 + x); a stride as log2(1 + |s|), or -1 when the
// index is not affine in the loop (strides are mostly 0, 1 or a row length); flags as 0/1.
#pragma once

#include <string>
#include <vector>

#include "cost_model/loop_nest.h"

namespace kiln::cost_model {

constexpr int kMaxLevels = 8;
constexpr int kGlobalSlots = 4;
constexpr int kLocalSlots = 2;
constexpr int kBufferSlots = kGlobalSlots + kLocalSlots;

// The fixed length of ir_features(): 332.
size_t ir_feature_count();
// "L0.extent", "L2.B1.loop_stride", "B4.present", "kernel.flops", ... in layout order.
const std::vector<std::string>& ir_feature_names();

std::vector<float> ir_features(const LoopNestSummary& summary);
std::vector<float> ir_features(const ir::LoweredFunc& f);

// Which summary buffer (index into LoopNestSummary::buffers) fills each slot; -1: empty.
std::vector<int> buffer_slots(const std::vector<BufferInfo>& buffers);

}  // namespace kiln::cost_model
