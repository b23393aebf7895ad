// Spawning and reaping farm processes for the tests; fixture jobs and references.
#include "farm_harness.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <stdexcept>
#include <thread>

#include "rpc/farm/data.h"

extern char** environ;

namespace kiln::farm::testing {
namespace {

namespace fs = std::filesystem;

std::string make_temp_dir() {
  std::string pattern = (fs::temp_directory_path() / "kiln-farm-test-XXXXXX").string();
  if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
  return pattern;
}

// Waits for `log` to hold "listening on HOST:PORT" and returns HOST:PORT.
std::string wait_listening(const std::string& log, double timeout_s) {
  const std::regex listening("listening on (127\\.0\\.0\\.1:[0-9]+)");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (std::chrono::steady_clock::now() < deadline) {
    std::smatch m;
    const std::string text = read_text(log);
    if (std::regex_search(text, m, listening)) return m[1];
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  throw std::runtime_error("no 'listening on' line within " + std::to_string(timeout_s) +
                           " s; the log:\n" + read_text(log));
}

}  // namespace

Process::Process(const std::vector<std::string>& argv, const std::string& log_path,
                 const std::vector<std::string>& extra_env) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND,
                                   0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  std::vector<std::string> env_strings;
  for (char** e = environ; *e; ++e) env_strings.emplace_back(*e);
  env_strings.insert(env_strings.end(), extra_env.begin(), extra_env.end());
  std::vector<char*> envp, cargv;
  for (auto& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  const int rc = posix_spawnp(&pid_, cargv[0], &actions, nullptr, cargv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw std::runtime_error("cannot start " + argv[0] + ": " + std::strerror(rc));
}

Process::~Process() {
  if (pid_ > 0 && !reaped_) {
    ::kill(pid_, SIGKILL);
    int status = 0;
    waitpid(pid_, &status, 0);
  }
}

void Process::kill_now(int sig) {
  ::kill(pid_, sig);
}

int Process::wait_exit(double timeout_s) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      reaped_ = true;
      return status;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return -1;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::vector<uint8_t> read_binary(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

Farm::Farm(double heartbeat_timeout_s) : dir_(make_temp_dir()) {
  token_ = "test-token-" + std::to_string(getpid()) + "-" + fs::path(dir_).filename().string();
  token_file_ = dir_ + "/farm.token";
  std::ofstream(token_file_) << token_ << "\n";
  const std::string log = dir_ + "/tracker.log";
  tracker_ = std::make_unique<Process>(
      std::vector<std::string>{KILN_BIN, "tracker", "--port", "0", "--token-file", token_file_,
                               "--heartbeat-timeout", std::to_string(heartbeat_timeout_s)},
      log);
  address_ = wait_listening(log, 10);
}

Farm::~Farm() {
  workers_.clear();
  tracker_.reset();
  std::error_code ec;
  fs::remove_all(dir_, ec);
}

std::size_t Farm::start_worker(const std::string& key, const std::vector<std::string>& extra) {
  return start_worker_command({KILN_WORKER}, key, extra);
}

std::size_t Farm::start_worker_command(const std::vector<std::string>& command,
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
      std::make_unique<Process>(argv, worker_log(i), std::vector<std::string>{"TMPDIR=" + dir_}));
  return i;
}

std::string Farm::worker_log(std::size_t i) const {
  return dir_ + "/worker" + std::to_string(i) + ".log";
}

void Farm::wait_for_workers(const std::string& key, int n, double timeout_s) {
  FarmClient c = client();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (std::chrono::steady_clock::now() < deadline) {
    int have = 0;
    const pb::StatusReply status = c.status();
    for (const auto& w : status.workers()) have += w.key() == key;
    if (have >= n) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  throw std::runtime_error("fewer than " + std::to_string(n) + " workers of key " + key +
                           " registered within " + std::to_string(timeout_s) + " s");
}

DirectWorker::DirectWorker(const std::vector<std::string>& extra) : dir_(make_temp_dir()) {
  token_ = "direct-token-" + std::to_string(getpid()) + "-" + fs::path(dir_).filename().string();
  const std::string token_file = dir_ + "/farm.token";
  std::ofstream(token_file) << token_ << "\n";
  std::vector<std::string> argv = {KILN_WORKER, "--listen", "127.0.0.1:0", "--token-file",
                                   token_file};
  argv.insert(argv.end(), extra.begin(), extra.end());
  const std::string log = dir_ + "/worker.log";
  process_ = std::make_unique<Process>(argv, log, std::vector<std::string>{"TMPDIR=" + dir_});
  address_ = wait_listening(log, 10);
}

DirectWorker::~DirectWorker() {
  process_.reset();
  std::error_code ec;
  fs::remove_all(dir_, ec);
}

pb::Job fixture_job(const std::string& entry, int64_t n, uint64_t seed, bool with_reference,
                    double timeout_s) {
  static const std::vector<uint8_t> so = read_binary(KILN_FARM_FIXTURE);
  return fixture_job_of(so, entry, n, seed, with_reference, timeout_s);
}

pb::Job fixture_job_of(const std::vector<uint8_t>& so, const std::string& entry, int64_t n,
                       uint64_t seed, bool with_reference, double timeout_s) {
  pb::Job job;
  job.set_so(so.data(), so.size());
  job.set_entry(entry);
  job.set_seed(seed);
  job.set_number(1);
  job.set_repeat(3);
  job.set_timeout_s(timeout_s);
  pb::Arg* size = job.add_args();
  size->set_dtype(pb::I64);
  size->add_shape(1);
  size->set_data(&n, sizeof n);
  pb::Arg* in = job.add_args();
  in->set_dtype(pb::F32);
  in->add_shape(n);
  pb::Arg* out = job.add_args();
  out->set_dtype(pb::F32);
  out->add_shape(n);
  out->set_is_output(true);
  if (with_reference) {
    const std::vector<uint8_t> input = fill_arg(*in, seed, 1);
    std::vector<float> want(static_cast<std::size_t>(n));
    std::memcpy(want.data(), input.data(), want.size() * sizeof(float));
    for (float& v : want) v += 1.0f;
    job.mutable_check()->add_reference(want.data(), want.size() * sizeof(float));
    job.mutable_check()->set_rtol(1e-5);
    job.mutable_check()->set_atol(1e-6);
  }
  return job;
}

}  // namespace kiln::farm::testing
