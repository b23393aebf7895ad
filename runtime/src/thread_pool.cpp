// The persistent thread pool behind kiln_runtime_api::parallel_for.
//
// Workers spin for a short while (kSpinTime) after each job, then sleep on the job
// generation counter (std::atomic::wait, a futex on Linux). The spin is what makes
// back-to-back kernels (the layers of a network) cheap to start: waking a futex-sleeping
// thread costs tens of microseconds in a VM, more than a small layer takes.
//
// Chunk 0 is the caller's; the others are claimed, not assigned: the workers, and the caller
// once its own chunk is done, take chunk indices from one counter tagged with the job's
// generation, so a worker the OS has not scheduled yet delays nothing (on a 2-vCPU VM that
// wait was a whole scheduler tick, 4 ms, in a network that runs in 0.1 ms): the caller runs
// the chunks nobody took. A worker that wakes late
// finds the generation moved on and claims nothing. The job slot is rewritten only once every
// claimed chunk has finished, so a worker reading it after a successful claim reads its job.
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "kiln/runtime.h"
#include "message.h"

namespace kiln {
namespace {

// How long a worker (or the dispatcher waiting for workers) polls before it sleeps.
constexpr std::chrono::microseconds kSpinTime{100};

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

// Polls `value` until it differs from `old` or kSpinTime passes; true when it changed.
template <typename T>
bool spin_until_changed(const std::atomic<T>& value, T old) {
  const auto deadline = std::chrono::steady_clock::now() + kSpinTime;
  for (int i = 0;; ++i) {
    if (value.load(std::memory_order_acquire) != old) return true;
    cpu_relax();
    if ((i & 63) == 63 && std::chrono::steady_clock::now() > deadline) return false;
  }
}

// True on pool workers always, and on a calling thread while it runs its own chunk: a
// parallel_for seen with this set is nested and runs serially.
thread_local bool t_in_parallel = false;
// The pool that the ABI's parallel_for dispatches to on this thread (see ThreadPool::Scope).
thread_local ThreadPool* t_bound_pool = nullptr;

int32_t run_serial(int64_t extent, kiln_parallel_body body, void* closure) {
  const bool was_in_parallel = t_in_parallel;
  t_in_parallel = true;
  const int32_t status = body(0, extent, closure);
  t_in_parallel = was_in_parallel;
  return status;
}

int32_t abi_parallel_for(int64_t extent, kiln_parallel_body body, void* closure) {
  if (!body) return -1;
  if (extent <= 0) return 0;
  if (ThreadPool* pool = t_bound_pool) return pool->parallel_for(extent, body, closure);
  return run_serial(extent, body, closure);
}

void* abi_alloc_workspace(uint64_t nbytes) {
  return alloc_workspace(nbytes);
}
void abi_free_workspace(void* ptr) {
  free_workspace(ptr);
}

const kiln_runtime_api kAbi = {
    .abi_version = KILN_ABI_VERSION,
    .parallel_for = &abi_parallel_for,
    .alloc_workspace = &abi_alloc_workspace,
    .free_workspace = &abi_free_workspace,
};

}  // namespace

struct ThreadPool::State {
  int num_threads = 1;
  uint64_t cpus = 0;  // the CPUs the workers (and a holding Scope's thread) run on; 0: any
  std::vector<std::thread> workers;
  std::mutex dispatch;  // one job at a time

  // The job slot: written by the dispatcher before it publishes the job in `claims`, read by
  // whoever claims one of its chunks.
  kiln_parallel_body body = nullptr;
  void* closure = nullptr;
  int64_t extent = 0;
  int chunks = 0;

  std::atomic<uint32_t> generation{0};  // bumped per job: what sleeping workers wait on
  // The current job's generation (high 32 bits) and how many of its chunks are still to be
  // handed out (low 32 bits): claiming one takes chunk `chunks - remaining` (1 .. chunks - 1).
  std::atomic<uint64_t> claims{0};
  std::atomic<int> finished{0};  // chunks of the current job done
  std::atomic<int32_t> status{0};
  std::atomic<bool> stop{false};

  // Chunk i of `chunks` near-equal contiguous pieces; the first `extent % chunks` get one more.
  void run_chunk(int i) {
    const int64_t base = extent / chunks;
    const int64_t extra = extent % chunks;
    const int64_t begin = i * base + std::min<int64_t>(i, extra);
    const int64_t end = begin + base + (i < extra ? 1 : 0);
    const int32_t s = body(begin, end, closure);
    if (s != 0) {
      int32_t expected = 0;
      status.compare_exchange_strong(expected, s, std::memory_order_relaxed);
    }
  }

  // Runs chunk i and counts it done, waking the caller when it was the last.
  void finish_chunk(int i) {
    run_chunk(i);
    if (finished.fetch_add(1, std::memory_order_acq_rel) + 1 == chunks) finished.notify_one();
  }

  // Runs chunks of job `gen` until none is left to claim. The job slot is read only after a
  // claim succeeded: until that chunk finishes, the caller cannot publish another job.
  void run_claimed_chunks(uint32_t gen) {
    uint64_t c = claims.load(std::memory_order_acquire);
    for (;;) {
      if (static_cast<uint32_t>(c >> 32) != gen || static_cast<uint32_t>(c) == 0) return;
      if (!claims.compare_exchange_weak(c, c - 1, std::memory_order_acq_rel)) continue;
      finish_chunk(chunks - static_cast<int>(static_cast<uint32_t>(c)));
      c = claims.load(std::memory_order_acquire);
    }
  }

  void worker_loop() {
    t_in_parallel = true;
    uint32_t seen = 0;
    for (;;) {
      if (!spin_until_changed(generation, seen)) generation.wait(seen, std::memory_order_acquire);
      seen = generation.load(std::memory_order_acquire);
      if (stop.load(std::memory_order_relaxed)) return;
      run_claimed_chunks(seen);
    }
  }

  void shut_down() {
    stop.store(true, std::memory_order_relaxed);
    generation.fetch_add(1, std::memory_order_release);
    generation.notify_all();
    for (auto& w : workers) w.join();
    workers.clear();
  }
};

namespace {

// Where the cores differ, a pool whose threads fit on the fast ones is held there (on an
// RK3399, a 2-thread pool on the two A72s); else it runs anywhere.
uint64_t default_pool_cpus(int num_threads) {
  const uint64_t fast = fastest_cpus(allowed_cpus());
  const int n = num_threads == 0 ? default_num_threads() : num_threads;
  return n <= __builtin_popcountll(fast) ? fast : 0;
}

// Holds the calling thread to the CPUs of `mask` (a 64-bit mask is the kernel's first long:
// allowed_cpus). One the process may not use (a cpuset changed since) makes the call fail,
// and the thread stays where it was.
void hold_thread_to(uint64_t mask) {
  sched_setaffinity(0, sizeof mask, reinterpret_cast<cpu_set_t*>(&mask));
}

}  // namespace

ThreadPool::ThreadPool(int num_threads)
    : ThreadPool(num_threads, num_threads < 0 ? 0 : default_pool_cpus(num_threads)) {}

ThreadPool::ThreadPool(int num_threads, uint64_t cpus) : state_(std::make_unique<State>()) {
  if (num_threads < 0) {
    throw_error(ErrorCode::kInvalidArgument,
                {"kiln: thread count must be >= 0 (0 = default), got ", Num(num_threads)});
  }
  State& s = *state_;
  s.num_threads = num_threads == 0 ? default_num_threads() : num_threads;
  s.cpus = cpus;
  try {
    for (int i = 1; i < s.num_threads; ++i) {
      s.workers.emplace_back([&s] {
        if (s.cpus) hold_thread_to(s.cpus);
        s.worker_loop();
      });
    }
  } catch (const std::system_error& e) {
    state_->shut_down();
    throw_error(ErrorCode::kInternal,
                {"kiln: cannot start ", Num(state_->num_threads), " pool threads: ", e.what()});
  }
}

ThreadPool::~ThreadPool() {
  state_->shut_down();
}

int ThreadPool::num_threads() const {
  return state_->num_threads;
}

int32_t ThreadPool::parallel_for(int64_t extent, kiln_parallel_body body, void* closure) {
  if (!body) return -1;
  if (extent <= 0) return 0;
  State& s = *state_;
  if (t_in_parallel || s.num_threads == 1 || extent == 1) return run_serial(extent, body, closure);

  std::lock_guard<std::mutex> lock(s.dispatch);
  s.body = body;
  s.closure = closure;
  s.extent = extent;
  s.chunks = static_cast<int>(std::min<int64_t>(s.num_threads, extent));
  s.status.store(0, std::memory_order_relaxed);
  s.finished.store(0, std::memory_order_relaxed);
  const uint32_t gen = s.generation.load(std::memory_order_relaxed) + 1;
  s.claims.store(uint64_t{gen} << 32 | static_cast<uint32_t>(s.chunks - 1),
                 std::memory_order_release);
  s.generation.store(gen, std::memory_order_release);
  s.generation.notify_all();

  t_in_parallel = true;
  s.finish_chunk(0);
  s.run_claimed_chunks(gen);  // the chunks no worker has taken yet
  t_in_parallel = false;

  for (int done; (done = s.finished.load(std::memory_order_acquire)) != s.chunks;) {
    if (!spin_until_changed(s.finished, done)) s.finished.wait(done, std::memory_order_acquire);
  }
  return s.status.load(std::memory_order_relaxed);
}

const kiln_runtime_api* ThreadPool::api() {
  return &kAbi;
}

ThreadPool::Scope::Scope(ThreadPool* pool, bool hold_cpus) : previous_(t_bound_pool) {
  t_bound_pool = pool;
  if (!hold_cpus || !pool || !pool->state_->cpus) return;
  saved_cpus_ = allowed_cpus();
  if (saved_cpus_) hold_thread_to(pool->state_->cpus);
}
ThreadPool::Scope::~Scope() {
  t_bound_pool = previous_;
  if (saved_cpus_) hold_thread_to(saved_cpus_);
}

ThreadPool& default_thread_pool() {
  static ThreadPool pool(0);
  return pool;
}

}  // namespace kiln
