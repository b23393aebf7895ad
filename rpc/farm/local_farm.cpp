// The local farm's processes: spawned without a shell, logs in the farm's temporary folder.
#include "rpc/farm/local_farm.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <regex>
#include <stdexcept>
#include <thread>

#include "rpc/farm/backoff.h"
#include "runtime/process/file_bytes.h"
#include "runtime/process/spawn.h"

namespace kiln::farm {

namespace fs = std::filesystem;

std::string wait_listening(const std::string& log, double timeout_s) {
  const std::regex listening("listening on (127\\.0\\.0\\.1:[0-9]+)");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  Backoff backoff(5, 200);  // a fresh process usually listens within milliseconds
  while (std::chrono::steady_clock::now() < deadline) {
    std::smatch m;
    const std::string text = read_text(log);
    if (std::regex_search(text, m, listening)) return m[1];
    backoff.wait();
  }
  throw std::runtime_error("no 'listening on' line within " + std::to_string(timeout_s) +
                           " s; the log:\n" + read_text(log));
}

ChildProcess::ChildProcess(const std::vector<std::string>& argv, const std::string& log_path,
                 const std::vector<std::string>& extra_env)
    : pid_(spawn_with_log(argv, log_path, extra_env)) {}

ChildProcess::~ChildProcess() {
  if (pid_ > 0 && !reaped_) {
    ::kill(pid_, SIGKILL);
    int status = 0;
    waitpid(pid_, &status, 0);
  }
}

void ChildProcess::kill_now(int sig) {
  ::kill(pid_, sig);
}

int ChildProcess::wait_exit(double timeout_s) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  Backoff backoff(5, 200);
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      reaped_ = true;
      return status;
    }
    backoff.wait();
  }
  return -1;
}

LocalFarm::LocalFarm(const std::vector<std::string>& tracker_command, double heartbeat_timeout_s)
{
  token_ = "farm-token-";
  token_ += std::to_string(getpid());
  token_ += "-";
  token_ += fs::path(dir_).filename().string();
  token_file_ = dir_ + "/farm.token";
  write_file_bytes(token_file_, token_ + "\n");
  const std::string log = dir_ + "/tracker.log";
  tracker_ = std::make_unique<ChildProcess>(
      [&] {
        std::vector<std::string> argv = tracker_command;
        argv.insert(argv.end(), {"--port", "0", "--token-file", token_file_,
                                 "--heartbeat-timeout", std::to_string(heartbeat_timeout_s)});
        return argv;
      }(),
      log, std::vector<std::string>{"KILN_EXIT_WITH_PARENT=1"});
  address_ = wait_listening(log, 10);
}

LocalFarm::~LocalFarm() {
  workers_.clear();
  tracker_.reset();
}

std::size_t LocalFarm::start_worker(const std::vector<std::string>& command,
                                    const std::string& key,
                                    const std::vector<std::string>& extra) {
  const std::size_t i = workers_.size();
  std::vector<std::string> argv = command;
  argv.insert(argv.end(), {"--tracker", address_, "--key", key, "--token-file", token_file_,
                           "--name", "w" + std::to_string(i)});
  argv.insert(argv.end(), extra.begin(), extra.end());
  // The sandbox's scratch directories land in the farm's directory, so that a worker killed
  // mid-job leaves nothing behind once the harness removes it.
  workers_.push_back(
      std::make_unique<ChildProcess>(argv, worker_log(i), std::vector<std::string>{"TMPDIR=" + dir_, "KILN_EXIT_WITH_PARENT=1"}));
  return i;
}

std::string LocalFarm::worker_log(std::size_t i) const {
  return dir_ + "/worker" + std::to_string(i) + ".log";
}

void LocalFarm::wait_for_workers(const std::string& key, int n, double timeout_s) {
  // The client retries an unreachable tracker for no longer than this wait is allowed.
  FarmClient c(address_, token_, "", RetryPolicy{timeout_s, nullptr});
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  Backoff backoff(10, 500);
  while (std::chrono::steady_clock::now() < deadline) {
    int have = 0;
    const pb::StatusReply status = c.status();
    for (const auto& w : status.workers()) have += w.key() == key;
    if (have >= n) return;
    backoff.wait();
  }
  throw std::runtime_error("fewer than " + std::to_string(n) + " workers of key " + key +
                           " registered within " + std::to_string(timeout_s) + " s");
}

}  // namespace kiln::farm
