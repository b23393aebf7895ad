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
    const fs::path beside = self.parent_path() / "kiln-farm-sandbox";
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
    TempDir dir("kiln-farm");
    const std::string so = dir.file("kernel.so"), job_file = dir.file("job.pb");
    write_all(so, job.so());
    pb::Job spec = job;
    spec.clear_so();
    spec.mutable_check()->clear_reference();
    write_all(job_file, spec.SerializeAsString());

    std::vector<std::string> argv = config.prefix;
    argv.insert(argv.end(), {config.helper, "--job", job_file, "--lib", so, "--out-dir", dir.path(),
                             "--mem-mb", std::to_string(config.mem_mb)});
    int status = 0;
    const std::string err_path = dir.file("stderr.txt");
    const Ended ended =
        spawn_and_watch(argv, dir.file("stdout.txt"), err_path, job.timeout_s(), cancel, &status);
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

    pb::Result measured;
    if (!measured.ParseFromString(read_all(dir.file("result.pb")))) {
      return finish(fail(r, pb::RUNTIME_ERROR, "the sandbox wrote no readable result"));
    }
    r.mutable_costs()->CopyFrom(measured.costs());
    r.set_number(measured.number());
    for (int i = 0, k = 0; i < job.args_size(); ++i) {
      if (!job.args(i).is_output()) continue;
      const std::string out = read_all(dir.file("out" + std::to_string(k) + ".bin"));
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
