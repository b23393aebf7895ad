// Running a kernel .so in a child process, natively or under qemu-aarch64: what kernel
// tests, `kiln demo` and the farm worker's measurement sandbox use.
//
// The child is kiln-kernel-runner (runtime/tools): a kernel that crashes, hangs or scribbles
// over memory takes only the child down, and AArch64 kernels run through a cross-built runner
// under qemu. Arguments travel as files in a temporary directory that is always removed.
#ifndef KILN_PROCESS_KERNEL_EXEC_H
#define KILN_PROCESS_KERNEL_EXEC_H

#include <atomic>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace kiln {

// The command prefix that runs an AArch64 Linux program here:
// {"qemu-aarch64", "-cpu", "max", "-L", PREFIX}. PREFIX is "/" when the multiarch arm64 libc
// is installed (/lib/ld-linux-aarch64.so.1 exists; "-L /usr/aarch64-linux-gnu" then hangs at
// start-up), else the cross toolchain's "/usr/aarch64-linux-gnu". Empty when qemu-aarch64 is not
// on PATH.
std::vector<std::string> aarch64_qemu_prefix();

// Exit statuses of kiln-kernel-runner (runtime/tools/kernel_runner.cpp) besides 0 and 1.
inline constexpr int kRunnerExitLoad = 10;    // the .so or its kernel does not load
inline constexpr int kRunnerExitKernel = 11;  // the kernel returned a non-zero status
inline constexpr int kRunnerExitUsage = 12;   // the runner's arguments are wrong

// One run of kiln-kernel-runner, the one child process that runs kernels (tests, benchmarks
// and every farm job go through it): the arguments' bytes go to files in a private temporary
// folder, the runner runs (under `prefix`, e.g. qemu-aarch64), the outputs come back.
struct RunnerInvocation {
  std::vector<std::string> prefix;  // e.g. aarch64_qemu_prefix(); empty for native runs
  std::string runner;               // path of kiln-kernel-runner (for the right architecture)
  std::string so_path, fn;
  // Set: so_path is a compiled model (model.so) and this its model.params; the runner runs the
  // model instead of kernel `fn`, args are its inputs and output_indices name model outputs.
  std::string params_path;
  std::vector<std::vector<uint8_t>> args;  // argument i gets args[i]'s bytes
  std::vector<int> output_indices;         // the buffers to return, in this order
  int threads = 1, warmup = 0, repeat = 1, number = 1;
  double min_repeat_ms = 0, cooldown_ms = 0;
  bool flush_cache = false;
  long mem_mb = 0;  // the child's address-space limit (0: none)
  double timeout_s = 120;
};

struct RunnerResult {
  enum class End { kExited, kTimedOut, kCancelled };
  End end = End::kExited;
  int status = 0;           // the wait status, when it exited
  std::string stderr_text;  // the runner's messages
  // When it exited with status 0:
  std::vector<std::vector<uint8_t>> outputs;  // one per output index, in that order
  std::vector<double> costs_s;                // seconds per call, one per repeat
  uint32_t number = 0;                        // calls per repeat actually used
  double median_ms = 0;
  bool ok() const;  // exited with status 0 and printed its result line
  // "exited with status 11", "was killed by signal 11 (Segmentation fault)", ...
  std::string describe() const;
};

// Never throws for anything the kernel does (a crash, a hang past timeout_s: the child's whole
// process group is killed); setting `cancel` stops it early. Throws std::runtime_error when the
// runner cannot be started or its files cannot be written.
RunnerResult invoke_kernel_runner(const RunnerInvocation& job,
                                  const std::atomic<bool>* cancel = nullptr);

struct KernelRun {
  std::vector<std::vector<uint8_t>> outputs;  // one per output index, in the order asked for
  double median_ms = 0;                       // the runner's median over `repeat` calls
};

// Runs `fn` of `so_path` through the kernel runner at `runner` (under qemu-aarch64 when
// `under_qemu`), with one buffer per element of `args` (argument i gets args[i]'s bytes, in a
// 64-byte-aligned buffer) and returns the final contents of the buffers in `output_indices`.
// Throws std::runtime_error carrying the runner's stderr when it fails, crashes or runs past
// `timeout_s` seconds (the child is then killed).
KernelRun run_kernel_out_of_process(const std::string& runner, bool under_qemu,
                                    const std::string& so_path, const std::string& fn,
                                    const std::vector<std::vector<uint8_t>>& args,
                                    const std::vector<int>& output_indices, int repeat = 1,
                                    int threads = 1, double timeout_s = 120);

// The bytes of `values`, as a kernel argument file holds them.
template <typename T>
std::vector<uint8_t> to_bytes(const std::vector<T>& values) {
  static_assert(std::is_trivially_copyable_v<T>);
  std::vector<uint8_t> bytes(values.size() * sizeof(T));
  if (!bytes.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

// The inverse of to_bytes; throws when the size is not a whole number of T.
template <typename T>
std::vector<T> from_bytes(const std::vector<uint8_t>& bytes) {
  static_assert(std::is_trivially_copyable_v<T>);
  if (bytes.size() % sizeof(T) != 0) {
    throw std::runtime_error("from_bytes: " + std::to_string(bytes.size()) +
                             " bytes is not a whole number of " + std::to_string(sizeof(T)) +
                             "-byte elements");
  }
  std::vector<T> values(bytes.size() / sizeof(T));
  if (!bytes.empty()) std::memcpy(values.data(), bytes.data(), bytes.size());
  return values;
}

}  // namespace kiln

#endif  // KILN_PROCESS_KERNEL_EXEC_H
