// A device farm on this machine: a tracker and workers as real child processes on loopback
// with an ephemeral port and a fresh token, all killed when the object goes away. What
// `kiln tune` starts when no --farm is given ("embedded farm"), and what the farm tests run.
#ifndef KILN_RPC_FARM_LOCAL_FARM_H
#define KILN_RPC_FARM_LOCAL_FARM_H

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "rpc/farm/client.h"
#include "runtime/process/file_bytes.h"
#include "runtime/process/temp_dir.h"

namespace kiln::farm {

// A child process with stdout and stderr appended to a log file; SIGKILLed and reaped in the
// destructor unless it already ended.
class ChildProcess {
 public:
  ChildProcess(const std::vector<std::string>& argv, const std::string& log_path,
               const std::vector<std::string>& extra_env = {});
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  pid_t pid() const { return pid_; }
  void kill_now(int sig);
  // The exit status (as from waitpid) once it ends within timeout_s, else -1.
  int wait_exit(double timeout_s);

 private:
  pid_t pid_ = -1;
  bool reaped_ = false;
};

// A child's log as written so far ("" before the child has written anything): what the farm
// and its tests read the logs with (runtime/process/file_bytes.h).
inline std::string read_text(const std::string& path) { return read_file_bytes_or_empty(path); }

// Waits for `log` to hold "listening on 127.0.0.1:PORT" and returns that address; throws with
// the log's text after `timeout_s`.
std::string wait_listening(const std::string& log, double timeout_s);

class LocalFarm {
 public:
  // `tracker_command` runs the tracker (e.g. {"/path/kiln", "tracker"}); the farm adds the
  // port, token and heartbeat options.
  LocalFarm(const std::vector<std::string>& tracker_command, double heartbeat_timeout_s = 5);
  ~LocalFarm();
  LocalFarm(const LocalFarm&) = delete;
  LocalFarm& operator=(const LocalFarm&) = delete;

  const std::string& address() const { return address_; }
  const std::string& token() const { return token_; }
  const std::string& token_file() const { return token_file_; }
  const std::string& dir() const { return dir_; }
  std::string tracker_log() const { return read_text(dir_ + "/tracker.log"); }
  pid_t tracker_pid() const { return tracker_->pid(); }

  // Starts a worker with `command` (e.g. {"/path/kiln-worker"} or a qemu prefix plus the
  // AArch64 worker) for device `key`; `extra` is appended. Returns its index.
  std::size_t start_worker(const std::vector<std::string>& command, const std::string& key,
                           const std::vector<std::string>& extra = {});
  ChildProcess& worker(std::size_t i) { return *workers_.at(i); }
  std::string worker_log(std::size_t i) const;
  // Waits (up to timeout_s) until `n` workers of `key` are registered.
  void wait_for_workers(const std::string& key, int n, double timeout_s = 10);
  FarmClient client() const { return FarmClient(address_, token_); }

 private:
  TempDir scratch_{"kiln-farm"};  // logs and token; removed last, after every process is gone
  std::string dir_ = scratch_.path(), token_, token_file_, address_;
  std::unique_ptr<ChildProcess> tracker_;
  std::vector<std::unique_ptr<ChildProcess>> workers_;
};

}  // namespace kiln::farm

#endif  // KILN_RPC_FARM_LOCAL_FARM_H
