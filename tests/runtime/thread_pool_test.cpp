// ThreadPool: coverage of every index, chunking, status propagation, nesting, the ABI entry.
#include <gtest/gtest.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <thread>
#include <utility>
#include <vector>

#include "kiln/runtime.h"

namespace kiln {
namespace {

// What one parallel_for saw: per-index hit counts, the chunks and the threads that ran them.
struct Record {
  explicit Record(int64_t extent) : hits(extent) {}
  std::vector<std::atomic<int>> hits;
  std::mutex mu;
  std::vector<std::pair<int64_t, int64_t>> chunks;
  std::set<std::thread::id> threads;
};

int32_t record_body(int64_t begin, int64_t end, void* closure) {
  auto* r = static_cast<Record*>(closure);
  for (int64_t i = begin; i < end; ++i) r->hits[i].fetch_add(1, std::memory_order_relaxed);
  std::lock_guard<std::mutex> lock(r->mu);
  r->chunks.emplace_back(begin, end);
  r->threads.insert(std::this_thread::get_id());
  return 0;
}

TEST(ThreadPool, CoversEveryIndexExactlyOnce) {
  for (int threads : {1, 2, 3, 4, 7, 16}) {
    ThreadPool pool(threads);
    ASSERT_EQ(pool.num_threads(), threads);
    for (int64_t extent : {0, 1, 2, 3, 5, 7, 8, 15, 16, 17, 100, 1000, 4097}) {
      Record r(extent);
      ASSERT_EQ(pool.parallel_for(extent, record_body, &r), 0);
      for (int64_t i = 0; i < extent; ++i) {
        ASSERT_EQ(r.hits[i].load(), 1)
            << "index " << i << " extent " << extent << " threads " << threads;
      }
      if (extent == 0) {
        EXPECT_TRUE(r.chunks.empty());
        continue;
      }
      // One chunk per thread's share, contiguous, sizes differing by at most one.
      const auto expected_chunks = std::min<int64_t>(threads, extent);
      ASSERT_EQ(static_cast<int64_t>(r.chunks.size()), expected_chunks);
      std::sort(r.chunks.begin(), r.chunks.end());
      int64_t next = 0, smallest = extent, largest = 0;
      for (const auto& [b, e] : r.chunks) {
        EXPECT_EQ(b, next);
        next = e;
        smallest = std::min(smallest, e - b);
        largest = std::max(largest, e - b);
      }
      EXPECT_EQ(next, extent);
      EXPECT_LE(largest - smallest, 1);
      // Chunks are claimed: the caller runs those no worker took in time, so as many threads
      // as chunks at most, and at least the caller.
      EXPECT_GE(static_cast<int64_t>(r.threads.size()), 1);
      EXPECT_LE(static_cast<int64_t>(r.threads.size()), expected_chunks);
    }
  }
}

TEST(ThreadPool, CallerRunsTheFirstChunk) {
  ThreadPool pool(4);
  Record r(4);
  ASSERT_EQ(pool.parallel_for(4, record_body, &r), 0);
  EXPECT_EQ(r.threads.count(std::this_thread::get_id()), 1u);
}

TEST(ThreadPool, ManyBackToBackCalls) {
  // Stresses the job hand-over between generations (the race a single job slot invites).
  ThreadPool pool(4);
  std::atomic<int64_t> sum{0};
  auto body = +[](int64_t b, int64_t e, void* c) -> int32_t {
    static_cast<std::atomic<int64_t>*>(c)->fetch_add(e - b, std::memory_order_relaxed);
    return 0;
  };
  int64_t expected = 0;
  for (int i = 0; i < 20000; ++i) {
    const int64_t extent = 1 + i % 9;
    expected += extent;
    ASSERT_EQ(pool.parallel_for(extent, body, &sum), 0);
  }
  EXPECT_EQ(sum.load(), expected);
}

TEST(ThreadPool, ConcurrentCallersShareOnePool) {
  ThreadPool pool(3);
  auto body = +[](int64_t b, int64_t e, void* c) -> int32_t {
    static_cast<std::atomic<int64_t>*>(c)->fetch_add(e - b, std::memory_order_relaxed);
    return 0;
  };
  std::atomic<int64_t> sum{0};
  std::vector<std::thread> callers;
  for (int t = 0; t < 3; ++t) {
    callers.emplace_back([&] {
      for (int i = 0; i < 2000; ++i) pool.parallel_for(10, body, &sum);
    });
  }
  for (auto& c : callers) c.join();
  EXPECT_EQ(sum.load(), 3 * 2000 * 10);
}

TEST(ThreadPool, ReturnsAFailingStatus) {
  ThreadPool pool(4);
  // Only the chunk holding index 37 fails.
  int64_t bad = 37;
  auto fail_at = +[](int64_t b, int64_t e, void* c) -> int32_t {
    const int64_t bad = *static_cast<int64_t*>(c);
    return b <= bad && bad < e ? 5 : 0;
  };
  EXPECT_EQ(pool.parallel_for(100, fail_at, &bad), 5);
  bad = 0;  // the caller's own chunk
  EXPECT_EQ(pool.parallel_for(100, fail_at, &bad), 5);
  bad = 1000;  // none
  EXPECT_EQ(pool.parallel_for(100, fail_at, &bad), 0);

  // Every chunk fails with its own code: the result is one of them.
  auto own_code = +[](int64_t b, int64_t, void*) -> int32_t { return static_cast<int32_t>(b + 1); };
  const int32_t status = pool.parallel_for(4, own_code, nullptr);
  EXPECT_GE(status, 1);
  EXPECT_LE(status, 4);
  // A failure does not poison the next call.
  Record r(10);
  EXPECT_EQ(pool.parallel_for(10, record_body, &r), 0);
}

TEST(ThreadPool, DegenerateArguments) {
  ThreadPool pool(2);
  EXPECT_EQ(pool.parallel_for(0, record_body, nullptr), 0);
  EXPECT_EQ(pool.parallel_for(-3, record_body, nullptr), 0);
  EXPECT_NE(pool.parallel_for(10, nullptr, nullptr), 0);
  EXPECT_THROW(ThreadPool(-1), RuntimeError);
}

struct Nested {
  ThreadPool* pool;
  bool through_api;
  std::mutex mu;
  std::vector<std::pair<int64_t, int64_t>> inner_chunks;
  std::vector<std::thread::id> inner_threads;
  std::vector<std::thread::id> outer_threads;
};

int32_t inner_body(int64_t b, int64_t e, void* c) {
  auto* n = static_cast<Nested*>(c);
  std::lock_guard<std::mutex> lock(n->mu);
  n->inner_chunks.emplace_back(b, e);
  n->inner_threads.push_back(std::this_thread::get_id());
  return 0;
}

int32_t outer_body(int64_t, int64_t, void* c) {
  auto* n = static_cast<Nested*>(c);
  {
    std::lock_guard<std::mutex> lock(n->mu);
    n->outer_threads.push_back(std::this_thread::get_id());
  }
  return n->through_api ? ThreadPool::api()->parallel_for(50, inner_body, n)
                        : n->pool->parallel_for(50, inner_body, n);
}

TEST(ThreadPool, NestedCallsRunSerially) {
  for (bool through_api : {false, true}) {
    ThreadPool pool(4);
    ThreadPool::Scope bind(&pool);
    Nested n{&pool, through_api, {}, {}, {}, {}};
    ASSERT_EQ(pool.parallel_for(4, outer_body, &n), 0);
    // Each of the 4 outer chunks ran the inner loop as one chunk, on its own thread.
    ASSERT_EQ(n.inner_chunks.size(), 4u);
    for (const auto& chunk : n.inner_chunks) EXPECT_EQ(chunk, (std::pair<int64_t, int64_t>(0, 50)));
    std::multiset<std::thread::id> outer(n.outer_threads.begin(), n.outer_threads.end());
    std::multiset<std::thread::id> inner(n.inner_threads.begin(), n.inner_threads.end());
    EXPECT_EQ(outer, inner);
  }
}

TEST(ThreadPool, AbiDispatchesToTheBoundPool) {
  const kiln_runtime_api* api = ThreadPool::api();
  ASSERT_EQ(api->abi_version, static_cast<uint32_t>(KILN_ABI_VERSION));
  ThreadPool pool(4);
  {
    Record r(100);
    ASSERT_EQ(api->parallel_for(100, record_body, &r), 0);  // nothing bound: serial
    EXPECT_EQ(r.chunks.size(), 1u);
  }
  {
    ThreadPool::Scope bind(&pool);
    Record r(100);
    ASSERT_EQ(api->parallel_for(100, record_body, &r), 0);
    EXPECT_EQ(r.chunks.size(), 4u);
    {
      ThreadPool two(2);
      ThreadPool::Scope rebind(&two);
      Record r2(100);
      ASSERT_EQ(api->parallel_for(100, record_body, &r2), 0);
      EXPECT_EQ(r2.chunks.size(), 2u);
    }
    Record r3(100);  // the outer binding is back
    ASSERT_EQ(api->parallel_for(100, record_body, &r3), 0);
    EXPECT_EQ(r3.chunks.size(), 4u);
  }
  Record r(100);
  ASSERT_EQ(api->parallel_for(100, record_body, &r), 0);
  EXPECT_EQ(r.chunks.size(), 1u);
}

// Where each chunk ran, and on which thread: chunks sleep, so that the workers claim theirs.
struct Placement {
  std::mutex mu;
  std::vector<std::pair<std::thread::id, int>> runs;  // thread, CPU
};

int32_t placement_body(int64_t, int64_t, void* closure) {
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  auto* p = static_cast<Placement*>(closure);
  std::lock_guard<std::mutex> lock(p->mu);
  p->runs.emplace_back(std::this_thread::get_id(), sched_getcpu());
  return 0;
}

// A pool held to some CPUs (what a big.LITTLE board gets for its big cores: fastest_cpus) runs
// its workers there, and a holding Scope's thread too until the Scope ends.
TEST(ThreadPool, AHeldPoolRunsOnItsCpus) {
  const uint64_t mine = allowed_cpus();
  if (__builtin_popcountll(mine) < 2) GTEST_SKIP() << "one CPU (or past CPU 63): nothing to choose";
  const int chosen = 63 - __builtin_clzll(mine);  // the last of this thread's CPUs
  ThreadPool pool(3, uint64_t{1} << chosen);
  Placement p;
  {
    ThreadPool::Scope hold(&pool, /*hold_cpus=*/true);
    EXPECT_EQ(allowed_cpus(), uint64_t{1} << chosen);
    ASSERT_EQ(pool.parallel_for(3, placement_body, &p), 0);
  }
  EXPECT_EQ(allowed_cpus(), mine) << "the Scope gives the thread its own mask back";
  ASSERT_EQ(p.runs.size(), 3u);
  for (const auto& [thread, cpu] : p.runs) EXPECT_EQ(cpu, chosen);
  // A Scope that only binds leaves the thread's mask alone.
  {
    ThreadPool::Scope bind(&pool);
    EXPECT_EQ(allowed_cpus(), mine);
  }
}

TEST(ThreadPool, APoolOfAlikeCoresIsNotHeld) {
  // On a machine whose cores are alike (fastest_cpus() empty), the default pool runs anywhere.
  if (fastest_cpus(allowed_cpus())) GTEST_SKIP() << "this machine's cores differ";
  const uint64_t mine = allowed_cpus();
  ThreadPool pool(2);
  ThreadPool::Scope hold(&pool, /*hold_cpus=*/true);
  EXPECT_EQ(allowed_cpus(), mine);
}

TEST(ThreadPool, DefaultPoolExists) {
  EXPECT_GE(default_thread_pool().num_threads(), 1);
  EXPECT_EQ(&default_thread_pool(), &default_thread_pool());
}

}  // namespace
}  // namespace kiln
