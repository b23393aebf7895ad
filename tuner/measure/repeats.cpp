#include "tuner/measure/repeats.h"

#include <algorithm>

#include "compiler/ir/functor.h"

namespace kiln::tuner {
namespace {

class FindParallel : public ir::IRVisitor {
 public:
  bool found = false;
  using ir::IRVisitor::visit;
  void visit(const ir::ForNode* op) override {
    if (op->for_kind == ir::ForKind::Parallel) {
      found = true;
      return;
    }
    ir::IRVisitor::visit(op);
  }
};

}  // namespace

uint32_t candidate_threads(const ir::LoweredFunc& func, uint32_t pool_threads) {
  if (pool_threads <= 1) return 1;
  FindParallel f;
  f.visit(func.body);
  return f.found ? pool_threads : 1;
}

uint32_t repeats_for_threads(uint32_t base, uint32_t threads) {
  uint32_t doublings = 0;  // ceil(log2 threads)
  while ((uint64_t{1} << doublings) < threads) ++doublings;
  const uint64_t n = uint64_t{std::max<uint32_t>(base, 1)} * (1 + 2 * uint64_t{doublings});
  return static_cast<uint32_t>(std::min<uint64_t>(n, kMaxRepeats));
}

}  // namespace kiln::tuner
