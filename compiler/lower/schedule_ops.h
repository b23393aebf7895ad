// From a schedule to a loop nest: the first and biggest lowering step.
//
// Inlined stages are substituted into their consumers; bound inference finds, for every
// stage computed inside another stage's loop, the region its consumer reads there; then
// each stage becomes its loop nest (split and fused loops, reductions with their
// initialisation placed before the first reduction loop, tensorized regions replaced by
// their intrinsic), with attached stages realized in small buffers at their loop.
// Partial tiles are guarded with IfThenElse; later passes peel those guards off the main
// body. Indices are still multi-dimensional here.
//
// The steps live apart: bound_inference.h, loop_nest_builder.h and tensorize.h, sharing
// the per-stage record of stage_info.h; schedule_ops.cpp runs them in order.
#pragma once

#include <vector>

#include "compiler/ir/bounds.h"
#include "compiler/ir/stmt.h"
#include "compiler/te/schedule.h"

namespace kiln::lower {

// `size_bounds`: the ranges of the kernel's run-time sizes (lower.h RunTimeSizes), which
// size the buffers of regions that span them.
ir::Stmt schedule_ops(const te::Schedule& s, const std::vector<te::Tensor>& args,
                      const ir::BoundMap& size_bounds = {});

}  // namespace kiln::lower
