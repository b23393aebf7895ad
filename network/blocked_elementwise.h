// Elementwise operators in the blocked NCHW[b]c layout of the conv kernels. Without it every
// elementwise node between two convs (MobileNetV3's HardSwish, its squeeze-excite Mul of a
// [N,C,H,W] tensor by a [N,C,1,1] scale) costs a conversion to NCHW and one back. In NCHW[b]c
// a [N,C,H,W] operand is [N,C/b,H,W,b], a per-channel [N,C,1,1] one is [N,C/b,1,1,b] (the
// same channel blocking) and one of a single value per image stays [N,1,1,1,1]: the rank-5
// workload broadcasts exactly as the rank-4 one did.
#pragma once

#include <optional>
#include <vector>

#include "network/kernel_layout.h"
#include "schedules/op_template.h"

namespace kiln::network {

// How an operand of the rank-4 workload is held in the blocked one.
enum class BlockedOperandKind {
  Full,        // [N,C,H,W] (or [N,C,1,1] when the output is): NCHW[b]c
  PerChannel,  // [N or 1, C, 1, 1] against a larger output: the channel vector, blocked
  PerImage,    // [N or 1, 1, 1, 1]: one value per image, the same memory in any layout
};

struct BlockedElementwise {
  schedules::Workload workload;           // rank 5
  std::vector<BlockedOperandKind> kinds;  // per operand, in the workload's order
};

// The workload of an elementwise op (map_elementwise's rank-4 form with operands a, b, c...)
// over NCHW[block]c, when every operand is one of the kinds above and either block divides C
// or the op keeps the padded channels finite (no div, log, exp...: an infinity there would
// reach the next conv's real channels through its zero weights); nothing otherwise.
std::optional<BlockedElementwise> blocked_elementwise(const schedules::Workload& w, Layout block);

}  // namespace kiln::network
