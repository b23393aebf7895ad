// KernelModule and AlignedBuffer: loading errors that name the file and symbol, and a real
// (hand-written) kernel module run through the pool.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <stdlib.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "kiln/runtime.h"

namespace kiln {
namespace {

// Runs `f`, which must throw RuntimeError with `code`; returns its message.
template <typename F>
std::string error_of(F&& f, ErrorCode code) {
  try {
    f();
  } catch (const RuntimeError& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no RuntimeError thrown";
  return "";
}

TEST(KernelModule, MissingFileNamesIt) {
  const std::string path = "/nonexistent/dir/libmissing_kernels.so";
  const std::string msg = error_of([&] { KernelModule m(path); }, ErrorCode::kLoad);
  EXPECT_NE(msg.find(path), std::string::npos) << msg;
  EXPECT_NE(msg.find("No such file"), std::string::npos) << msg;  // dlerror's words
}

TEST(KernelModule, NotASharedObjectNamesIt) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("kiln-rt-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "not_a_library.so").string();
  {
    std::ofstream text(path);  // longer than an ELF header, so dlopen reads and rejects it
    for (int i = 0; i < 20; ++i) text << "this is text, not an ELF file\n";
  }
  const std::string msg = error_of([&] { KernelModule m(path); }, ErrorCode::kLoad);
  std::filesystem::remove_all(dir);
  EXPECT_NE(msg.find(path), std::string::npos) << msg;
  EXPECT_NE(msg.find("ELF"), std::string::npos) << msg;
}

TEST(KernelModule, MissingInitNamesFileAndSymbol) {
  const std::string msg = error_of([] { KernelModule m(KILN_FIXTURE_NO_INIT); }, ErrorCode::kLoad);
  EXPECT_NE(msg.find(KILN_FIXTURE_NO_INIT), std::string::npos) << msg;
  EXPECT_NE(msg.find("kiln_module_init"), std::string::npos) << msg;
}

TEST(KernelModule, FailingInitIsAnError) {
  const std::string msg = error_of([] { KernelModule m(KILN_FIXTURE_BAD_INIT); }, ErrorCode::kLoad);
  EXPECT_NE(msg.find(KILN_FIXTURE_BAD_INIT), std::string::npos) << msg;
  EXPECT_NE(msg.find("status 3"), std::string::npos) << msg;
}

TEST(KernelModule, MissingKernelNamesFileAndSymbol) {
  KernelModule m(KILN_FIXTURE_KERNEL);
  EXPECT_TRUE(m.has_kernel("add_one"));
  EXPECT_FALSE(m.has_kernel("no_such_kernel"));
  const std::string msg = error_of([&] { m.kernel("no_such_kernel"); }, ErrorCode::kSymbol);
  EXPECT_NE(msg.find("no_such_kernel"), std::string::npos) << msg;
  EXPECT_NE(msg.find(KILN_FIXTURE_KERNEL), std::string::npos) << msg;
}

TEST(KernelModule, AddOneOnEveryPoolSize) {
  for (int threads : {1, 2, 4}) {
    ThreadPool pool(threads);
    KernelModule m(KILN_FIXTURE_KERNEL, pool);
    const Kernel add_one = m.kernel("add_one");
    for (int64_t n : {0, 1, 7, 1000, 100003}) {
      AlignedBuffer size(sizeof(int64_t)), in(n * sizeof(float)), out(n * sizeof(float));
      *static_cast<int64_t*>(size.data()) = n;
      auto* x = static_cast<float*>(in.data());
      for (int64_t i = 0; i < n; ++i) x[i] = static_cast<float>(i) * 0.5f - 3;
      void* args[] = {size.data(), in.data(), out.data()};
      add_one(args);
      const auto* y = static_cast<const float*>(out.data());
      for (int64_t i = 0; i < n; ++i) ASSERT_EQ(y[i], x[i] + 1) << "i=" << i << " n=" << n;
    }
  }
}

TEST(KernelModule, WorkspaceFromTheAbi) {
  ThreadPool pool(2);
  KernelModule m(KILN_FIXTURE_KERNEL, pool);
  for (int64_t n : {0, 1, 4099}) {
    std::vector<float> in(n, 2.5f), out(n, 0.0f);
    void* args[] = {&n, in.data(), out.data()};
    m.call("add_one_ws", args);
    for (float y : out) ASSERT_EQ(y, 3.5f);
  }
}

TEST(KernelModule, KernelsUseTheModulesPool) {
  for (int threads : {1, 3}) {
    ThreadPool pool(threads);
    KernelModule m(KILN_FIXTURE_KERNEL, pool);
    int64_t n = 1000, chunks = -1;
    void* args[] = {&n, &chunks};
    m.call("count_chunks", args);
    EXPECT_EQ(chunks, threads);
  }
}

TEST(KernelModule, KernelFailureIsAnError) {
  ThreadPool pool(4);
  KernelModule m(KILN_FIXTURE_KERNEL, pool);
  int64_t n = 100, bad = 60;
  void* args[] = {&n, &bad};
  const Kernel fail_at = m.kernel("fail_at");
  EXPECT_EQ(fail_at.run(args), 7);
  const std::string msg = error_of([&] { fail_at(args); }, ErrorCode::kKernel);
  EXPECT_NE(msg.find("fail_at"), std::string::npos) << msg;
  EXPECT_NE(msg.find("status 7"), std::string::npos) << msg;
  bad = 1000;
  EXPECT_NO_THROW(fail_at(args));
}

TEST(KernelModule, MovesKeepTheLibraryLoaded) {
  ThreadPool pool(2);
  KernelModule a(KILN_FIXTURE_KERNEL, pool);
  KernelModule b(std::move(a));
  int64_t n = 10, chunks = 0;
  void* args[] = {&n, &chunks};
  b.call("count_chunks", args);
  EXPECT_EQ(chunks, 2);
  EXPECT_EQ(b.path(), KILN_FIXTURE_KERNEL);
}

TEST(AlignedBuffer, AlignedZeroedAndMovable) {
  for (std::size_t size : {0, 1, 63, 64, 65, 1000, 1 << 20}) {
    AlignedBuffer b(size);
    ASSERT_NE(b.data(), nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(b.data()) % AlignedBuffer::kAlignment, 0u);
    EXPECT_EQ(b.size(), size);
    const auto* bytes = static_cast<const uint8_t*>(b.data());
    for (std::size_t i = 0; i < size; ++i) ASSERT_EQ(bytes[i], 0) << i;
  }
  AlignedBuffer a(100);
  void* p = a.data();
  AlignedBuffer b = std::move(a);
  EXPECT_EQ(b.data(), p);
  EXPECT_EQ(b.size(), 100u);
  AlignedBuffer c(5);
  c = std::move(b);
  EXPECT_EQ(c.data(), p);
}

TEST(AlignedBuffer, LargeBuffersAreZeroEvenWhenMemoryIsReused) {
  // Large buffers come from mmap, not the heap: each must still start zeroed, whatever the
  // previous one left behind, and move and free like the small ones.
  for (int round = 0; round < 3; ++round) {
    AlignedBuffer b((4u << 20) + 3);
    auto* bytes = static_cast<uint8_t*>(b.data());
    EXPECT_EQ(reinterpret_cast<uintptr_t>(bytes) % AlignedBuffer::kAlignment, 0u);
    for (std::size_t i = 0; i < b.size(); i += 997) ASSERT_EQ(bytes[i], 0) << i;
    std::memset(bytes, 0xab, b.size());
  }
  AlignedBuffer big(2u << 20);
  AlignedBuffer moved = std::move(big);
  moved = AlignedBuffer(3u << 20);
  EXPECT_EQ(moved.size(), 3u << 20);
  EXPECT_EQ(big.data(), nullptr);
}

TEST(Workspace, AlignedAndNeverThrows) {
  for (uint64_t n : {0, 1, 64, 1000}) {
    void* p = alloc_workspace(n);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % AlignedBuffer::kAlignment, 0u);
    free_workspace(p);
  }
  EXPECT_EQ(alloc_workspace(UINT64_MAX / 2), nullptr);
  free_workspace(nullptr);
  const kiln_runtime_api* api = ThreadPool::api();
  void* p = api->alloc_workspace(128);
  ASSERT_NE(p, nullptr);
  api->free_workspace(p);
}

// A kernel asks for its scratch on every call: those pages must not be faulted in again each
// time (glibc hands freed blocks of a few MB back to the system; conv2d.winograd's three blocks
// cost about 920 faults per call and tripled its standalone time). Three blocks, as Winograd
// takes them (padded input, transformed input, GEMM output), written and freed in turn.
TEST(Workspace, ReusedAcrossCallsWithoutFaultingItsPagesInAgain) {
  const std::size_t sizes[] = {1u << 20, 2u << 20, 2u << 20};
  auto call = [&] {
    void* blocks[3];
    for (int i = 0; i < 3; ++i) {
      blocks[i] = alloc_workspace(sizes[i]);
      ASSERT_NE(blocks[i], nullptr);
      std::memset(blocks[i], i + 1, sizes[i]);
    }
    for (int i = 2; i >= 0; --i) free_workspace(blocks[i]);
  };
  auto minor_faults = [] {
    rusage u{};
    getrusage(RUSAGE_THREAD, &u);
    return u.ru_minflt;
  };
  call();  // the first call faults its 5 MB in (1,280 pages)
  const long before = minor_faults();
  for (int i = 0; i < 10; ++i) call();
  EXPECT_LT(minor_faults() - before, 100) << "page faults in 10 calls after the first";
  // Live blocks stay distinct, and a block comes back for the next request it fits.
  void* a = alloc_workspace(2u << 20);
  void* b = alloc_workspace(2u << 20);
  EXPECT_NE(a, b);
  free_workspace(b);
  EXPECT_EQ(alloc_workspace(2u << 20), b);
  free_workspace(b);
  free_workspace(a);
}

}  // namespace
}  // namespace kiln
