// Channel shuffles and channel slices in the blocked NCHW[b]c layout of the conv kernels.
// ShuffleNet-V2 splits each unit's input in two channel halves (Split or two Slices), runs
// one half through convs, concatenates it with the other and shuffles the channels
// (fuse_channel_shuffle.h). In NCHW every unit costs a conversion out of the convs' blocks,
// the shuffle's copies and conversions back for each half; on blocks it is one shuffle that
// reads each input in the block it is held in, and slices that copy whole blocks.
#pragma once

#include <optional>
#include <vector>

#include "network/kernel_layout.h"
#include "schedules/op_template.h"

namespace kiln::network {

// map_channel_shuffle's NCHW workload `w` reading input i in blocks of held[i] (0: NCHW,
// read in `block` after a conversion) and writing blocks of `block`; nothing when the
// channels do not divide into `block` or the kernel would not run it by whole vectors
// (channel by channel in blocks is slower than the NCHW copy).
std::optional<schedules::Workload> blocked_channel_shuffle(const schedules::Workload& w,
                                                           const std::vector<Layout>& held,
                                                           Layout block);

// map_slice's workload `w` of a slice from `x` to `y` (both rank 4) that takes whole blocks
// of `block` channels and everything else whole, read from and written to NCHW[block]c:
// there it is the same contiguous run per image, so the kernel is the same; the workload
// names the block so that what the layout plan reads from it differs from the NCHW slice.
// Nothing for any other slice.
std::optional<schedules::Workload> blocked_channel_slice(const schedules::Workload& w,
                                                         const std::vector<int64_t>& x,
                                                         const std::vector<int64_t>& y,
                                                         Layout block);

}  // namespace kiln::network
