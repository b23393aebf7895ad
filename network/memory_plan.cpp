#include "network/memory_plan.h"

#include <algorithm>

#include "compiler/base/error.h"

namespace kiln::network {

namespace {

uint64_t align_up(uint64_t v) { return (v + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment; }

struct Life {
  int first = -1, last = -1;
};

}  // namespace

void plan_memory(NetworkProgram& p) {
  std::vector<Life> life(p.buffers.size());
  for (size_t s = 0; s < p.steps.size(); ++s)
    for (int b : p.steps[s].args) {
      if (life[b].first < 0) life[b].first = static_cast<int>(s);
      life[b].last = static_cast<int>(s);
    }
  // Largest first packs tighter (the usual greedy-by-size heuristic); ties by first use.
  std::vector<int> order;
  for (size_t b = 0; b < p.buffers.size(); ++b)
    if (p.buffers[b].kind == BufferKind::Workspace && life[b].first >= 0)
      order.push_back(static_cast<int>(b));
  std::sort(order.begin(), order.end(), [&](int a, int b) {
    if (p.buffers[a].bytes != p.buffers[b].bytes) return p.buffers[a].bytes > p.buffers[b].bytes;
    return life[a].first < life[b].first;
  });
  std::vector<int> placed;
  p.workspace_bytes = p.naive_workspace_bytes = 0;
  for (int b : order) {
    const uint64_t size = align_up(p.buffers[b].bytes);
    p.naive_workspace_bytes += size;
    // Placed buffers alive at the same time, by offset: take the first gap that fits.
    std::vector<std::pair<uint64_t, uint64_t>> busy;
    for (int o : placed)
      if (life[o].first <= life[b].last && life[b].first <= life[o].last)
        busy.emplace_back(p.buffers[o].offset, p.buffers[o].offset + align_up(p.buffers[o].bytes));
    std::sort(busy.begin(), busy.end());
    uint64_t offset = 0;
    for (auto [lo, hi] : busy) {
      if (offset + size <= lo) break;
      offset = std::max(offset, hi);
    }
    p.buffers[b].offset = offset;
    p.workspace_bytes = std::max(p.workspace_bytes, offset + size);
    placed.push_back(b);
  }
  internal_check(p.workspace_bytes <= p.naive_workspace_bytes) << "memory plan larger than naive";
}

}  // namespace kiln::network
