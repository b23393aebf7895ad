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

void* alloc_workspace(uint64_t nbytes) noexcept {
  // posix_memalign rather than operator new: called from C kernels, it must not throw, and a
  // zero-byte request still gets a real pointer (kernels read NULL as out of memory).
  if (nbytes > SIZE_MAX) return nullptr;
  const std::size_t size = nbytes == 0 ? 1 : static_cast<std::size_t>(nbytes);
  void* p = nullptr;
  return posix_memalign(&p, AlignedBuffer::kAlignment, size) == 0 ? p : nullptr;
}

void free_workspace(void* ptr) noexcept {
  free(ptr);
}

}  // namespace kiln
