// Loop nest building: turns a scheduled stage, once bound inference has filled in its
// StageInfo, into its loop nest (split and fused loops in leaf order, loop kinds and
// pragmas, the reduction's initialisation, partial-tile guards), with the stages attached
// at its loops realized inside them and tensorized loops handed to tensorize.h. Separate
// from bound inference, which only computes ranges, and from the kernel-level assembly in
// schedule_ops.cpp.
#pragma once

#include <vector>

#include "compiler/ir/stmt.h"
#include "compiler/lower/stage_info.h"
#include "compiler/te/schedule.h"

namespace kiln::lower {

// The loop nest of stage `si` of schedule `s`; `info` holds every stage's StageInfo.
ir::Stmt make_nest(const te::Schedule& s, StageInfoMap& info, StageInfo& si);

// `body` with every access of buffer `from` moved to `to`, the region's `origin`
// subtracted from each index.
ir::Stmt rebase_buffer(const ir::Stmt& body, const ir::BufferNode* from, ir::Buffer to,
                       std::vector<ir::Expr> origin);

}  // namespace kiln::lower
