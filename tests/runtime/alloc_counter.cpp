// Replacement global operator new/delete that count allocations while asked to (alloc_counter.h).
// In a file of its own so that no caller sees these bodies inlined next to std::allocator's.
#include "tests/runtime/alloc_counter.h"

#include <atomic>
#include <cstdlib>
#include <new>

namespace {
std::atomic<bool> g_counting{false};
std::atomic<int> g_allocations{0};
}  // namespace

void* operator new(std::size_t size) {
  if (g_counting.load(std::memory_order_relaxed)) g_allocations.fetch_add(1);
  if (void* p = std::malloc(size ? size : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
  std::free(p);
}

namespace kiln::testing {

void start_counting_allocations() {
  g_allocations = 0;
  g_counting = true;
}

int stop_counting_allocations() {
  g_counting = false;
  return g_allocations.load();
}

}  // namespace kiln::testing
