// 64-byte-aligned host memory: AlignedBuffer for kernel arguments, and the workspace allocator
// that the kernel ABI hands to generated code.
#include <stdlib.h>
#include <sys/mman.h>

#include <cstdint>
#include <cstring>
#include <new>
#include <utility>

#include "kiln/runtime.h"

namespace kiln {
namespace {

// From this size on a buffer comes straight from mmap: the kernel hands out pages that are
// already zero, on first touch. A model's workspace arena (6.4 MB for ResNet-18) then costs
// nothing at load, where the memset that zeroed it touched every page (2.7-23 ms on a shared
// 2-core machine); the first run faults the pages in as it writes them anyway.
constexpr std::size_t kMapBytes = std::size_t(1) << 20;

std::size_t rounded_size(std::size_t size) {
  // Round up to whole cache lines and never allocate zero bytes, so that data() is a valid
  // pointer a kernel may be handed even for an empty tensor.
  const std::size_t rounded = size == 0 ? AlignedBuffer::kAlignment
                                        : (size + AlignedBuffer::kAlignment - 1) /
                                              AlignedBuffer::kAlignment * AlignedBuffer::kAlignment;
  if (rounded < size) throw std::bad_alloc();  // overflow
  return rounded;
}

void* allocate(std::size_t size) {
  const std::size_t rounded = rounded_size(size);
  if (rounded >= kMapBytes) {
    void* p = mmap(nullptr, rounded, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    return p;  // page-aligned, hence 64-byte aligned
  }
  void* p = ::operator new(rounded, std::align_val_t(AlignedBuffer::kAlignment));
  std::memset(p, 0, rounded);
  return p;
}

void release(void* p, std::size_t size) {
  if (!p) return;
  const std::size_t rounded = rounded_size(size);
  if (rounded >= kMapBytes) {
    munmap(p, rounded);
    return;
  }
  ::operator delete(p, std::align_val_t(AlignedBuffer::kAlignment));
}

}  // namespace

AlignedBuffer::AlignedBuffer(std::size_t size) : data_(allocate(size)), size_(size) {}

AlignedBuffer::AlignedBuffer(AlignedBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

AlignedBuffer& AlignedBuffer::operator=(AlignedBuffer&& other) noexcept {
  if (this != &other) {
    release(data_, size_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

AlignedBuffer::~AlignedBuffer() {
  release(data_, size_);
}

// Workspaces are kept for reuse rather than handed back to the C library at once. A kernel
// asks for its scratch on every call, and glibc returns a freed block of a few MB to the
// operating system (munmap, or a trim of the heap top), so every call faulted all of its pages
// in again: conv2d.winograd 64x56x56 took about 920 page faults per call, 0.9 ms of work timed
// at 3.0 ms alone, which made the tuner rank it below direct convolutions that run 2.5x slower
// in the network. Each thread keeps its last few freed blocks, whose pages stay mapped.
namespace {

constexpr std::size_t kHeader = AlignedBuffer::kAlignment;  // holds the block's usable size
constexpr int kCachedBlocks = 4;

struct WorkspaceCache {
  void* raw[kCachedBlocks] = {};
  std::size_t size[kCachedBlocks] = {};
  ~WorkspaceCache() {
    for (void* p : raw) free(p);
  }
};

WorkspaceCache& workspace_cache() {
  thread_local WorkspaceCache cache;
  return cache;
}

}  // namespace

void* alloc_workspace(uint64_t nbytes) noexcept {
  // posix_memalign rather than operator new: called from C kernels, it must not throw, and a
  // zero-byte request still gets a real pointer (kernels read NULL as out of memory).
  if (nbytes > SIZE_MAX - 2 * kHeader) return nullptr;
  const std::size_t size = nbytes == 0 ? 1 : static_cast<std::size_t>(nbytes);
  // The smallest cached block that holds `size`.
  WorkspaceCache& cache = workspace_cache();
  int best = -1;
  for (int i = 0; i < kCachedBlocks; ++i)
    if (cache.raw[i] && cache.size[i] >= size && (best < 0 || cache.size[i] < cache.size[best]))
      best = i;
  void* raw = nullptr;
  if (best >= 0) {
    raw = std::exchange(cache.raw[best], nullptr);
  } else {
    if (posix_memalign(&raw, AlignedBuffer::kAlignment, size + kHeader) != 0) return nullptr;
    *static_cast<std::size_t*>(raw) = size;
  }
  return static_cast<char*>(raw) + kHeader;
}

void free_workspace(void* ptr) noexcept {
  if (!ptr) return;
  void* raw = static_cast<char*>(ptr) - kHeader;
  const std::size_t size = *static_cast<std::size_t*>(raw);
  // Into an empty slot, else in place of the smallest cached block when this one is larger
  // (the large ones are those whose pages cost the most to fault in again).
  WorkspaceCache& cache = workspace_cache();
  int slot = 0;
  for (int i = 0; i < kCachedBlocks; ++i) {
    if (!cache.raw[i]) {
      slot = i;
      break;
    }
    if (cache.size[i] < cache.size[slot]) slot = i;
  }
  if (cache.raw[slot] && cache.size[slot] >= size) {
    free(raw);
    return;
  }
  free(cache.raw[slot]);
  cache.raw[slot] = raw;
  cache.size[slot] = size;
}

}  // namespace kiln
