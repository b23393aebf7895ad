// Tensorize: replaces the loops of a stage from one leaf loop inwards by a tensor
// intrinsic's call. Separate from building the loop nest (loop_nest_builder.h), which
// calls it at the loop marked tensorize, because it has its own checks (whole tiles,
// matching extents) and describes the region to the intrinsic instead of emitting loops.
#pragma once

#include <cstddef>
#include <vector>

#include "compiler/ir/stmt.h"
#include "compiler/lower/stage_info.h"
#include "compiler/te/schedule.h"

namespace kiln::lower {

// The intrinsic's statement for leaf loops `l`.. of `si` (store index `out_idx`, stored
// value `value`), under those of `conds` that do not name the replaced loops. `info`
// gives the loop extents of the stages `si` is attached inside.
ir::Stmt make_tensorized(StageInfoMap& info, StageInfo& si, size_t l, size_t first_reduce,
                         const std::vector<ir::Expr>& out_idx, const ir::Expr& value,
                         const std::vector<ir::Expr>& conds, const te::TensorIntrin& intrin);

}  // namespace kiln::lower
