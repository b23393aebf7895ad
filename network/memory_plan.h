// Memory planning: every workspace buffer gets a 64-byte-aligned offset in one arena. A
// buffer is live from the step that writes it to the last step that reads it; buffers whose
// lives overlap (the same step included: kernels take non-aliasing arguments) never share
// bytes, others reuse them. Fills workspace_bytes and, for the report, the naive sum.
#pragma once

#include "network/network_program.h"

namespace kiln::network {

constexpr uint64_t kArenaAlignment = 64;

void plan_memory(NetworkProgram& program);

}  // namespace kiln::network
