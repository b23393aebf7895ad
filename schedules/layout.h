// Layout conversions between NCHW and the blocked-channel layout NCHW[x]c that the conv2d
// templates compute in: [N, C, H, W] <-> [N, ceil(C/x), H, W, x], channels past C in the
// last block zero. A network converts only at its edges and keeps the blocked layout
// between layers, so these are kernels of their own (templates "layout.nchw_to_nchwc" and
// "layout.nchwc_to_nchw", workload op "layout_transform" with params N, C, H, W, block and
// direction 0 = to blocked, 1 = back to NCHW; "layout.nchwc_to_nchwc", direction 2, re-blocks
// from src_block to block in one pass). The host-side functions below are their
// reference and the pack/unpack of every blocked template's arguments.
#pragma once

#include <cstdint>

#include "schedules/op_template.h"

namespace kiln::schedules {

// [N, C, H, W] -> [N, ceil(C/block), H, W, block], zero-padded channels.
Values pack_nchwc(const Values& v, int64_t n, int64_t c, int64_t h, int64_t w, int64_t block);
// The inverse: drops the padded channels.
Values unpack_nchwc(const Values& v, int64_t n, int64_t c, int64_t h, int64_t w, int64_t block);
// A vector over channels, zero-padded to `to` elements (bias of a blocked output).
Values pad_channels(const Values& v, int64_t to);

const OpTemplate& layout_nchw_to_nchwc_template();
const OpTemplate& layout_nchwc_to_nchw_template();
// NCHW[a]c -> NCHW[b]c directly (direction 2, params N, C, H, W, src_block a, block b).
const OpTemplate& layout_nchwc_to_nchwc_template();

}  // namespace kiln::schedules
