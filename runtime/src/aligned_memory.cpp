// 64-byte-aligned host memory: AlignedBuffer for kernel arguments, and the workspace allocator
// that the kernel ABI hands to generated code.
#include <stdlib.h>

#include <cstdint>
#include <cstring>
#include <new>
#include <utility>

#include "kiln/runtime.h"

namespace kiln {
namespace {

void* allocate(std::size_t size) {
  // Round up to whole cache lines and never allocate zero bytes, so that data() is a valid
  // pointer a kernel may be handed even for an empty tensor.
  const std::size_t rounded = size == 0 ? AlignedBuffer::kAlignment
                                        : (size + AlignedBuffer::kAlignment - 1) /
                                              AlignedBuffer::kAlignment * AlignedBuffer::kAlignment;
  if (rounded < size) throw std::bad_alloc();  // overflow
  void* p = ::operator new(rounded, std::align_val_t(AlignedBuffer::kAlignment));
  std::memset(p, 0, rounded);
  return p;
}

void release(void* p) {
  if (p) ::operator delete(p, std::align_val_t(AlignedBuffer::kAlignment));
}

}  // namespace

AlignedBuffer::AlignedBuffer(std::size_t size) : data_(allocate(size)), size_(size) {}

AlignedBuffer::AlignedBuffer(AlignedBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

AlignedBuffer& AlignedBuffer::operator=(AlignedBuffer&& other) noexcept {
  if (this != &other) {
    release(data_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

AlignedBuffer::~AlignedBuffer() {
  release(data_);
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
