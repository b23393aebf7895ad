// Spawning, watching and reading back the sandbox child.
#include "rpc/farm/sandbox.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>

#include "rpc/farm/data.h"
#include "rpc/farm/transport.h"
#include "rpc/farm/validate.h"
#include "runtime/process/spawn.h"
#include "runtime/process/temp_dir.h"


namespace kiln::farm {
namespace {

namespace fs = std::filesystem;


std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_all(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("cannot write " + path);
}

std::string tail(std::string s, std::size_t n = 2000) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s.size() > n ? "..." + s.substr(s.size() - n) : s;
}

enum class Ended { kExited, kTimedOut, kCancelled };

// The kernel runner's JSON line: "number":N and "costs_s":[...] (seconds per call, one per
// repeat). A plain scan: the line's format is the runner's own (runtime/tools/kernel_runner.cpp).
bool parse_runner_line(const std::string& line, pb::Result* r) {
  const size_t number = line.find("\"number\":"), costs = line.find("\"costs_s\":[");
  if (number == std::string::npos || costs == std::string::npos) return false;
  r->set_number(static_cast<uint32_t>(std::strtoul(line.c_str() + number + 9, nullptr, 10)));
  const char* p = line.c_str() + costs + 11;
  while (*p && *p != ']') {
    char* end = nullptr;
    const double v = std::strtod(p, &end);
    if (end == p) return false;
    r->add_costs(v);
    p = *end == ',' ? end + 1 : end;
  }
  return r->costs_size() > 0;
}

// Spawns argv in a process group of its own; waits for it, killing the group on timeout or
// cancel. `status` gets the wait status when it exited.
Ended spawn_and_watch(const std::vector<std::string>& argv, const std::string& out_path,
                      const std::string& err_path, double timeout_s,
                      const std::atomic<bool>& cancel, int* status) {
  const pid_t pid = spawn_in_own_group(argv, out_path, err_path);

  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                            std::chrono::duration<double>(timeout_s));
  // A pidfd becomes readable the moment the child exits, so a short job is seen as done at
  // once instead of at the next poll (polling cost a few ms per job). Where there is no
  // pidfd_open (an old kernel, or an emulator without it), poll with growing naps.
  const int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  auto nap = std::chrono::microseconds(100);
  Ended ended;
  for (;;) {
    const pid_t done = waitpid(pid, status, WNOHANG);
    if (done == pid) {
      ended = Ended::kExited;
      break;
    }
    const auto now = std::chrono::steady_clock::now();
    const bool late = now >= deadline;
    if (late || cancel.load()) {
      kill(-pid, SIGKILL);
      int ignored = 0;
      waitpid(pid, &ignored, 0);
      ended = late ? Ended::kTimedOut : Ended::kCancelled;
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

pb::Result fail(pb::Result r, pb::ErrorKind kind, const std::string& message) {
  r.set_error(kind);
  r.set_message(message);
  return r;
}

}  // namespace

std::string default_sandbox_helper(const std::string& fallback) {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const fs::path beside = self.parent_path() / "kiln-kernel-runner";
    if (access(beside.c_str(), X_OK) == 0) return beside.string();
  }
  return fallback;
}

pb::Result run_in_sandbox(const pb::Job& job, const SandboxConfig& config,
                          const std::atomic<bool>& cancel) {
  pb::Result r;
  r.set_job_id(job.job_id());
  r.set_index(job.index());
  r.set_start_time(unix_now());
  auto finish = [&](pb::Result res) {
    res.set_end_time(unix_now());
    return res;
  };
  if (const std::string why = validate_job(job); !why.empty()) {
    return finish(fail(r, pb::INVALID_JOB, why));
  }
  try {
    // The job as files for the kernel runner: the .so, one file per argument (inputs filled
    // as data.h describes, outputs zeroed), and where the outputs go.
    TempDir dir("kiln-farm");
    const std::string so = dir.file("kernel.so");
    write_all(so, job.so());
    std::vector<std::string> argv = config.prefix;
    argv.insert(argv.end(),
                {config.helper, "--lib", so, "--fn", job.entry(), "--threads",
                 std::to_string(std::max<uint32_t>(1, job.threads())), "--repeat",
                 std::to_string(job.repeat()), "--number",
                 std::to_string(std::max<uint32_t>(1, job.number())), "--min-repeat-ms",
                 std::to_string(job.min_repeat_ms()), "--cooldown-ms",
                 std::to_string(job.cooldown_ms()), "--mem-mb", std::to_string(config.mem_mb)});
    if (job.flush_cache()) argv.push_back("--flush-cache");
    std::vector<std::string> out_files;
    for (int i = 0; i < job.args_size(); ++i) {
      const std::vector<uint8_t> bytes = fill_arg(job.args(i), job.seed(), i);
      const std::string file = dir.file("arg" + std::to_string(i) + ".bin");
      write_all(file, std::string(bytes.begin(), bytes.end()));
      argv.insert(argv.end(), {"--arg", file});
      if (!job.args(i).is_output()) continue;
      out_files.push_back(dir.file("out" + std::to_string(i) + ".bin"));
      argv.insert(argv.end(), {"--out", std::to_string(i) + "=" + out_files.back()});
    }
    int status = 0;
    const std::string err_path = dir.file("stderr.txt"), out_path = dir.file("stdout.txt");
    const Ended ended = spawn_and_watch(argv, out_path, err_path, job.timeout_s(), cancel, &status);
    if (ended == Ended::kTimedOut) {
      return finish(
          fail(r, pb::TIMEOUT,
               "ran past its timeout of " + std::to_string(job.timeout_s()) + " s and was killed"));
    }
    if (ended == Ended::kCancelled) return finish(fail(r, pb::CANCELLED, "cancelled"));
    const std::string err = tail(read_all(err_path));
    if (WIFSIGNALED(status)) {
      const int sig = WTERMSIG(status);
      return finish(fail(r, pb::RUNTIME_ERROR,
                         "killed by signal " + std::to_string(sig) + " (" + strsignal(sig) + ")" +
                             (err.empty() ? "" : ": " + err)));
    }
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    if (code == 10) return finish(fail(r, pb::BUILD_ERROR, err));
    if (code == 12) return finish(fail(r, pb::INVALID_JOB, err));
    if (code != 0) {
      return finish(
          fail(r, pb::RUNTIME_ERROR, "exited with status " + std::to_string(code) + ": " + err));
    }

    if (!parse_runner_line(read_all(out_path), &r))
      return finish(fail(r, pb::RUNTIME_ERROR, "the kernel runner printed no readable result"));
    for (int i = 0, k = 0; i < job.args_size(); ++i) {
      if (!job.args(i).is_output()) continue;
      const std::string out = read_all(out_files.at(k));
      if (job.check().reference_size() > 0) {
        const std::string why =
            compare_outputs(job.args(i).dtype(), std::vector<uint8_t>(out.begin(), out.end()),
                            job.check().reference(k), job.check().rtol(), job.check().atol());
        if (!why.empty() && r.error() == pb::OK) {
          r.set_error(pb::WRONG_RESULT);
          r.set_message("output argument " + std::to_string(i) + ": " + why);
        }
      }
      if (job.check().return_outputs()) r.add_outputs(out);
      ++k;
    }
    return finish(r);
  } catch (const std::exception& e) {
    return finish(fail(r, pb::RUNTIME_ERROR, std::string("worker: ") + e.what()));
  }
}

}  // namespace kiln::farm
