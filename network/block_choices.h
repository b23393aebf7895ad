// The channel blocks a network tune tries per conv task (`kiln tune MODEL.onnx
// --layout-choices N`): the untuned kernel's blocks (what its neighbours use today) and up to
// N-1 alternatives that set every block knob to one common value, in the order vector width,
// twice it, half of it (the blocks the NCHW[x]c templates do best with), where the default
// template's space offers that value for each of its block knobs. Tuning each pin gives the
// joint layout choice (layout_plan.h) a measured kernel per block to weigh against the
// conversions a change of block costs.
#pragma once

#include <vector>

#include "network/extract_tasks.h"

namespace kiln::network {

// The pins for `task` (its own blocks first); just that one when it has no block knob or n <= 1.
std::vector<schedules::Config> block_choices(const ExtractedTask& task, const Target& target,
                                             size_t n);

}  // namespace kiln::network
