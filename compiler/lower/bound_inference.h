// Bound inference: the ranges of every stage's loops, and for a stage computed inside
// another stage's loop (compute_at) the region its readers use there. Separate from
// building the loop nests because it only computes ranges and values; the nests are
// built afterwards from what it records (see schedule_ops.h for the order).
#pragma once

#include "compiler/lower/stage_info.h"
#include "compiler/te/schedule.h"

namespace kiln::lower {

// Consumers first, for every compute stage that is not inlined: the range of its root
// axes (for an attached stage, the region its readers use inside the attach loop), the
// extents of its split and fused loops, and the value of each iter var in terms of its
// leaf loops. `info` holds a StageInfo for every stage, bodies already inlined.
// `size_bounds`: the ranges of run-time sizes (a region that spans one is realized at its
// largest and looped over at its run-time extent).
void infer_bounds(const te::Schedule& s, StageInfoMap& info, const ir::BoundMap& size_bounds = {});

}  // namespace kiln::lower
