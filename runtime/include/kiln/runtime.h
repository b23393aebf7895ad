// The C++ face of kiln's deployable runtime: a thread pool that serves the kernels' parallel
// loops, a loader for kernel shared objects, an aligned host buffer, and the functions that
// decide how many threads the process may really use.
//
// Everything here sits on libc, libdl and pthread only, so it cross-builds for boards. Errors
// are thrown as kiln::RuntimeError; runtime_c.h wraps the same functions behind status codes
// for callers that must not see exceptions.
#ifndef KILN_RUNTIME_H
#define KILN_RUNTIME_H

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include "kiln/kernel_abi.h"

namespace kiln {

// ---------------------------------------------------------------------------------------------
// Errors

// The values are the C API's status codes (runtime_c.h), so the C layer maps them one to one.
enum class ErrorCode : int32_t {
  kInvalidArgument = 1,  // the caller passed something unusable (a bad thread count, ...)
  kLoad = 2,             // dlopen failed or the module's kiln_module_init is missing/failed
  kSymbol = 3,           // the module has no such kernel
  kKernel = 4,           // a kernel returned a non-zero status
  kIo = 5,               // a file could not be read or written
  kInternal = 6,         // a bug in the runtime (or an unexpected exception)
  kParams = 7,           // a params file is invalid, or belongs to another model
  kInvalidInput = 8,     // an input's shape is not the model's, or its values are outside what
                         // the model accepts (an index out of range)
};

class RuntimeError : public std::runtime_error {
 public:
  RuntimeError(ErrorCode code, const std::string& message)
      : std::runtime_error(message), code_(code) {}
  ErrorCode code() const { return code_; }

 private:
  ErrorCode code_;
};

// ---------------------------------------------------------------------------------------------
// How many threads to use
//
// The parsers are pure (they take the file's text) so that every container layout can be
// unit tested; the *_cpu_* readers below feed them the real files.

// cgroup v2 `cpu.max` ("max 100000" or "QUOTA PERIOD"): ceil(QUOTA / PERIOD), or nullopt when
// unlimited or unparsable.
std::optional<int> parse_cgroup_v2_cpu_max(std::string_view cpu_max);
// cgroup v1 `cpu.cfs_quota_us` / `cpu.cfs_period_us`: ceil(quota / period), or nullopt when the
// quota is -1 (unlimited) or either text is unparsable.
std::optional<int> parse_cgroup_v1_cpu_quota(std::string_view quota_us, std::string_view period_us);
// A thread count as given in KILN_NUM_THREADS: a positive decimal integer (surrounding
// whitespace allowed), else nullopt.
std::optional<int> parse_thread_count(std::string_view text);
// The cgroup path of this process's CPU controller from `/proc/self/cgroup` text: the v2 line
// ("0::/path") when present, else the v1 line whose controllers include "cpu". nullopt if none.
std::optional<std::string> parse_proc_self_cgroup(std::string_view proc_self_cgroup);

// CPUs in this process's affinity mask (sched_getaffinity); at least 1.
int affinity_cpu_count();
// The CPU limit of this process's cgroup (v2, else v1), rounded up; nullopt when unlimited.
std::optional<int> cgroup_cpu_limit();
// min(affinity_cpu_count(), cgroup_cpu_limit()): what the process may really use.
int available_cpu_count();
// CPU sets below are masks of CPUs 0-63 (bit i: CPU i); the boards whose cores differ have
// fewer, and a machine with more is treated as one whose cores are alike.
//
// The calling thread's affinity mask; 0 on a machine with more than 64 possible CPUs.
uint64_t allowed_cpus();
// The fast CPUs among `allowed` where they are not all alike: those whose capacity (the
// kernel's SYSFS_CPU/cpuN/cpu_capacity) is within a quarter of the largest. On a big.LITTLE
// board these are the big cores (an RK3399's two Cortex-A72, not its four A53). 0 when every
// allowed CPU has the same capacity or the kernel does not say for one of them.
uint64_t fastest_cpus(uint64_t allowed, const char* sysfs_cpu = "/sys/devices/system/cpu");
// KILN_NUM_THREADS when it is a valid count, else available_cpu_count(), capped at the number of
// fastest_cpus() where the cores differ: a thread on a little core would hold up every
// parallel loop, whose chunks are equal.
int default_num_threads();

// ---------------------------------------------------------------------------------------------
// ThreadPool

// A persistent pool of num_threads - 1 workers; the thread calling parallel_for runs the first
// chunk itself. One parallel_for runs at a time per pool (concurrent callers queue on a mutex).
class ThreadPool {
 public:
  // num_threads == 0 means default_num_threads(); negative counts are an error. Where the cores
  // differ and the threads fit on the fast ones (fastest_cpus()), the pool is held there.
  explicit ThreadPool(int num_threads = 0);
  // The same with the workers held to the CPU mask `cpus` (0: anywhere), and a holding
  // Scope's thread with them.
  ThreadPool(int num_threads, uint64_t cpus);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_threads() const;

  // Splits [0, extent) into at most num_threads() contiguous chunks of near-equal size, runs
  // `body` on each (chunk 0 on the caller; the others on whichever workers claim them first,
  // the caller taking those still unclaimed when its own is done) and returns the first non-zero
  // status any chunk returned, or 0. A call made from inside a parallel body (of any pool) runs
  // the whole range serially on the calling thread: nested parallelism would only oversubscribe.
  int32_t parallel_for(int64_t extent, kiln_parallel_body body, void* closure);

  // The ABI table handed to kernel modules: parallel_for, and the workspace allocator below.
  // Its parallel_for carries no pool handle, so it dispatches to the pool bound to the *calling
  // thread* by a Scope (KernelModule binds its pool around every kernel call); with no pool
  // bound it runs serially. A thread-local binding, unlike a process-wide "current pool", lets
  // threads drive different pools at once.
  static const kiln_runtime_api* api();

  // Binds `pool` to the current thread for the lifetime of the Scope (restoring the previous
  // binding afterwards), for callers that invoke kernel function pointers themselves. With
  // `hold_cpus`, a pool held to CPUs holds this thread there too (it runs chunk 0) and gives
  // back its own CPU mask afterwards: Model::run does so (three system calls per run).
  class Scope {
   public:
    explicit Scope(ThreadPool* pool, bool hold_cpus = false);
    ~Scope();
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    ThreadPool* previous_;
    uint64_t saved_cpus_ = 0;  // the thread's own CPU mask while held
  };

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// A process-wide pool of default_num_threads(), created on first use.
ThreadPool& default_thread_pool();

// ---------------------------------------------------------------------------------------------
// KernelModule

class KernelModule;

// One kernel of a loaded module, bound to the module's pool. Valid while its module lives.
class Kernel {
 public:
  // Runs the kernel; throws RuntimeError(kKernel) naming the kernel and module on a non-zero
  // status.
  void operator()(void* const* args) const;
  // Runs the kernel and returns its status (no exceptions).
  int32_t run(void* const* args) const noexcept;

  const std::string& name() const { return name_; }
  kiln_kernel_fn function() const { return fn_; }

 private:
  friend class KernelModule;
  Kernel(kiln_kernel_fn fn, ThreadPool* pool, std::string name, std::string module_path)
      : fn_(fn), pool_(pool), name_(std::move(name)), module_path_(std::move(module_path)) {}

  kiln_kernel_fn fn_;
  ThreadPool* pool_;
  std::string name_;
  std::string module_path_;
};

// A kernel shared object: dlopen'ed with RTLD_NOW | RTLD_LOCAL, its kiln_module_init called
// with ThreadPool::api(). Every failure throws RuntimeError naming the file (and symbol) with
// dlerror's text.
class KernelModule {
 public:
  // `pool` must outlive the module; the default is default_thread_pool().
  explicit KernelModule(const std::string& path, ThreadPool& pool = default_thread_pool());
  // The same, for a module that must also export every symbol in `required`: one that lacks
  // any is refused right after dlopen, before any of its code runs, as "not <kind>" (e.g.
  // "a kiln model").
  KernelModule(const std::string& path, ThreadPool& pool,
               std::initializer_list<const char*> required, const char* kind);
  ~KernelModule();
  KernelModule(KernelModule&& other) noexcept;
  KernelModule& operator=(KernelModule&& other) noexcept;
  KernelModule(const KernelModule&) = delete;
  KernelModule& operator=(const KernelModule&) = delete;

  bool has_kernel(const std::string& name) const;
  // Looks a kernel up once (dlsym); throws RuntimeError(kSymbol) when it is missing.
  Kernel kernel(const std::string& name) const;
  // kernel(name)(args).
  void call(const std::string& name, void* const* args) const;
  // The address of any exported symbol (data included), or nullptr when there is none.
  void* symbol(const char* name) const;
  // The size the module's symbol table records for the exported symbol at `address` (what
  // `symbol` returned), or 0 when unknown: bounds a data symbol before it is read.
  static std::size_t symbol_size(const void* address);

  const std::string& path() const { return path_; }

 private:
  std::string path_;
  void* handle_ = nullptr;
  ThreadPool* pool_ = nullptr;
};

// ---------------------------------------------------------------------------------------------
// Aligned memory

// Zero-initialised host memory aligned to kAlignment bytes (a cache line, and the widest vector
// kiln emits). Even an empty buffer has a valid, non-null data() so that it can be passed as a
// kernel argument (a moved-from buffer is the exception: null and empty).
class AlignedBuffer {
 public:
  static constexpr std::size_t kAlignment = 64;

  AlignedBuffer() : AlignedBuffer(0) {}
  explicit AlignedBuffer(std::size_t size);
  AlignedBuffer(AlignedBuffer&& other) noexcept;
  AlignedBuffer& operator=(AlignedBuffer&& other) noexcept;
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;
  ~AlignedBuffer();

  void* data() { return data_; }
  const void* data() const { return data_; }
  std::size_t size() const { return size_; }

 private:
  void* data_ = nullptr;
  std::size_t size_ = 0;
};

// The ABI's workspace allocator (kiln_runtime_api::alloc_workspace / free_workspace):
// kAlignment-aligned, nullptr when out of memory, never throws. Not zeroed. Each thread
// keeps its last few freed blocks for its next requests, so a kernel that takes scratch on
// every call does not fault its pages in again every time.
void* alloc_workspace(uint64_t nbytes) noexcept;
void free_workspace(void* ptr) noexcept;

}  // namespace kiln

#endif  // KILN_RUNTIME_H
