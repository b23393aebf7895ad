// Out-of-process kernel runs: temp files in, kiln-kernel-runner (maybe under qemu), files out.
#include "runtime/process/kernel_exec.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "runtime/process/file_bytes.h"
#include "runtime/process/spawn.h"
#include "runtime/process/temp_dir.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

bool executable_on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/local/bin:/usr/bin:/bin");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    const fs::path candidate = fs::path(dir.empty() ? "." : dir) / name;
    if (access(candidate.c_str(), X_OK) == 0) return true;
  }
  return false;
}

std::string join(const std::vector<std::string>& argv) {
  std::string s;
  for (const auto& a : argv) s += (s.empty() ? "" : " ") + a;
  return s;
}

// Spawns argv in a process group of its own; waits for it, killing the group on timeout or
// cancel. `status` gets the wait status when it exited.
RunnerResult::End spawn_and_watch(const std::vector<std::string>& argv, const std::string& out_path,
                                  const std::string& err_path, double timeout_s,
                                  const std::atomic<bool>* cancel, int* status) {
  const pid_t pid = spawn_in_own_group(argv, out_path, err_path);
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                            std::chrono::duration<double>(timeout_s));
  // A pidfd becomes readable the moment the child exits, so a short job is seen as done at
  // once instead of at the next poll (polling cost a few ms per job). Where there is no
  // pidfd_open (an old kernel, or an emulator without it), poll with growing naps.
  const int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  auto nap = std::chrono::microseconds(100);
  RunnerResult::End ended;
  for (;;) {
    const pid_t done = waitpid(pid, status, WNOHANG);
    if (done == pid) {
      ended = RunnerResult::End::kExited;
      break;
    }
    if (done < 0 && errno != EINTR) {
      if (pidfd >= 0) close(pidfd);
      throw std::runtime_error(std::string("waitpid failed: ") + std::strerror(errno));
    }
    const auto now = std::chrono::steady_clock::now();
    const bool late = now >= deadline;
    if (late || (cancel && cancel->load())) {
      kill(-pid, SIGKILL);
      int ignored = 0;
      waitpid(pid, &ignored, 0);
      ended = late ? RunnerResult::End::kTimedOut : RunnerResult::End::kCancelled;
      break;
    }
    if (pidfd >= 0) {
      // Wake for the exit, else every 20 ms to look at the deadline and the cancel flag.
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now);
      pollfd p{pidfd, POLLIN, 0};
      poll(&p, 1, static_cast<int>(std::clamp<int64_t>(left.count() + 1, 1, 20)));
      continue;
    }
    std::this_thread::sleep_for(nap);
    nap = std::min(nap * 2, std::chrono::microseconds(5000));
  }
  if (pidfd >= 0) close(pidfd);
  return ended;
}

// The runner's JSON line: "number":N, "median_ms":M and "costs_s":[...]. A plain scan: the
// line's format is the runner's own (runtime/tools/kernel_runner.cpp).
bool parse_result_line(const std::string& line, RunnerResult* r) {
  const size_t number = line.find("\"number\":"), median = line.find("\"median_ms\":"),
               costs = line.find("\"costs_s\":[");
  if (number == std::string::npos || median == std::string::npos || costs == std::string::npos)
    return false;
  r->number = static_cast<uint32_t>(std::strtoul(line.c_str() + number + 9, nullptr, 10));
  r->median_ms = std::strtod(line.c_str() + median + 12, nullptr);
  for (const char* p = line.c_str() + costs + 11; *p && *p != ']';) {
    char* end = nullptr;
    const double v = std::strtod(p, &end);
    if (end == p) return false;
    r->costs_s.push_back(v);
    p = *end == ',' ? end + 1 : end;
  }
  return !r->costs_s.empty();
}

}  // namespace

std::vector<std::string> aarch64_qemu_prefix() {
  if (!executable_on_path("qemu-aarch64")) return {};
  const bool multiarch = access("/lib/ld-linux-aarch64.so.1", F_OK) == 0;
  return {"qemu-aarch64", "-cpu", "max", "-L", multiarch ? "/" : "/usr/aarch64-linux-gnu"};
}

bool RunnerResult::ok() const {
  return end == End::kExited && WIFEXITED(status) && WEXITSTATUS(status) == 0 && !costs_s.empty();
}

std::string RunnerResult::describe() const {
  if (end == End::kTimedOut) return "timed out and was killed";
  if (end == End::kCancelled) return "was cancelled";
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    return "was killed by signal " + std::to_string(sig) + " (" + strsignal(sig) + ")";
  }
  return "ended with wait status " + std::to_string(status);
}

RunnerResult invoke_kernel_runner(const RunnerInvocation& job, const std::atomic<bool>* cancel) {
  if (job.runner.empty()) throw std::runtime_error("invoke_kernel_runner: no runner given");
  const bool model = !job.params_path.empty();
  for (const int i : job.output_indices) {
    if (i < 0 || (!model && static_cast<std::size_t>(i) >= job.args.size())) {
      throw std::runtime_error("invoke_kernel_runner: output index " + std::to_string(i) +
                               " is not one of the " + std::to_string(job.args.size()) +
                               " arguments");
    }
  }
  TempDir dir("kiln-kexec");
  std::vector<std::string> argv = job.prefix;
  argv.insert(argv.end(),
              {job.runner, "--lib", job.so_path, model ? "--params" : "--fn",
               model ? job.params_path : job.fn, "--threads",
               std::to_string(job.threads), "--warmup", std::to_string(job.warmup), "--repeat",
               std::to_string(job.repeat), "--number", std::to_string(job.number),
               "--min-repeat-ms", std::to_string(job.min_repeat_ms), "--cooldown-ms",
               std::to_string(job.cooldown_ms), "--mem-mb", std::to_string(job.mem_mb)});
  if (job.flush_cache) argv.push_back("--flush-cache");
  for (std::size_t i = 0; i < job.args.size(); ++i) {
    const std::string path = dir.file("arg" + std::to_string(i) + ".bin");
    write_file_bytes(path, job.args[i].data(), job.args[i].size());
    argv.insert(argv.end(), {"--arg", path});
  }
  for (const int i : job.output_indices)
    argv.insert(argv.end(),
                {"--out", std::to_string(i) + "=" + dir.file("out" + std::to_string(i) + ".bin")});

  RunnerResult r;
  const std::string out_path = dir.file("stdout.txt"), err_path = dir.file("stderr.txt");
  r.end = spawn_and_watch(argv, out_path, err_path, job.timeout_s, cancel, &r.status);
  r.stderr_text = read_file_bytes_or_empty(err_path);
  while (!r.stderr_text.empty() && (r.stderr_text.back() == '\n' || r.stderr_text.back() == ' '))
    r.stderr_text.pop_back();
  if (r.end != RunnerResult::End::kExited || !WIFEXITED(r.status) || WEXITSTATUS(r.status) != 0)
    return r;
  if (!parse_result_line(read_file_bytes_or_empty(out_path), &r)) {
    r.stderr_text = "the kernel runner printed no readable result line (" + join(argv) + ")";
    r.costs_s.clear();
    return r;
  }
  for (const int i : job.output_indices) {
    const std::string path = dir.file("out" + std::to_string(i) + ".bin");
    r.outputs.push_back(read_file_bytes_or_empty<std::vector<uint8_t>>(path));
  }
  return r;
}

KernelRun run_kernel_out_of_process(const std::string& runner, bool under_qemu,
                                    const std::string& so_path, const std::string& fn,
                                    const std::vector<std::vector<uint8_t>>& args,
                                    const std::vector<int>& output_indices, int repeat, int threads,
                                    double timeout_s) {
  RunnerInvocation job;
  if (under_qemu) {
    job.prefix = aarch64_qemu_prefix();
    if (job.prefix.empty()) throw std::runtime_error("qemu-aarch64 is not on PATH");
  }
  job.runner = runner;
  job.so_path = so_path;
  job.fn = fn;
  job.args = args;
  job.output_indices = output_indices;
  job.repeat = repeat;
  job.threads = threads;
  job.timeout_s = timeout_s;
  RunnerResult r = invoke_kernel_runner(job);
  if (!r.ok())
    throw std::runtime_error("kernel '" + fn + "' of '" + so_path + "': the runner " +
                             r.describe() + "; stderr:\n" + r.stderr_text);
  return {std::move(r.outputs), r.median_ms};
}

}  // namespace kiln
