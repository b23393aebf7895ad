// Out-of-process kernel runs: temp files in, kiln-kernel-runner (maybe under qemu), files out.
#include "runtime/process/kernel_exec.h"
#include "runtime/process/spawn.h"
#include "runtime/process/temp_dir.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>
#include <thread>


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

// A fresh private directory, removed with everything in it when the object goes away.

void write_bytes(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("cannot write " + path);
}

std::vector<uint8_t> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string join(const std::vector<std::string>& argv) {
  std::string s;
  for (const auto& a : argv) s += (s.empty() ? "" : " ") + a;
  return s;
}

// Spawns argv (no shell) in a process group of its own, stdout/stderr to files; returns the
// wait status, or throws after killing the whole group when it runs past timeout_s.
int spawn_and_wait(const std::vector<std::string>& argv, const std::string& stdout_path,
                   const std::string& stderr_path, double timeout_s) {
  const pid_t pid = spawn_in_own_group(argv, stdout_path, stderr_path);

  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                            std::chrono::duration<double>(timeout_s));
  auto nap = std::chrono::microseconds(200);
  for (;;) {
    int status = 0;
    const pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) return status;
    if (done < 0 && errno != EINTR) {
      throw std::runtime_error(std::string("waitpid failed: ") + std::strerror(errno));
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      kill(-pid, SIGKILL);
      waitpid(pid, &status, 0);
      throw std::runtime_error("'" + join(argv) + "' timed out after " + std::to_string(timeout_s) +
                               " s and was killed; stderr:\n" + read_text(stderr_path));
    }
    std::this_thread::sleep_for(nap);
    nap = std::min(nap * 2, std::chrono::microseconds(20000));
  }
}

std::string describe_status(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    return "was killed by signal " + std::to_string(sig) + " (" + strsignal(sig) + ")";
  }
  return "ended with wait status " + std::to_string(status);
}

double parse_median_ms(const std::string& json) {
  const std::string key = "\"median_ms\":";
  const auto at = json.find(key);
  if (at == std::string::npos) throw std::runtime_error("no median_ms in runner output: " + json);
  const char* begin = json.c_str() + at + key.size();
  char* end = nullptr;
  const double v = std::strtod(begin, &end);
  if (end == begin) throw std::runtime_error("bad median_ms in runner output: " + json);
  return v;
}

}  // namespace

std::vector<std::string> aarch64_qemu_prefix() {
  if (!executable_on_path("qemu-aarch64")) return {};
  const bool multiarch = access("/lib/ld-linux-aarch64.so.1", F_OK) == 0;
  return {"qemu-aarch64", "-cpu", "max", "-L", multiarch ? "/" : "/usr/aarch64-linux-gnu"};
}

KernelRun run_kernel_out_of_process(const std::string& runner, bool under_qemu,
                                    const std::string& so_path, const std::string& fn,
                                    const std::vector<std::vector<uint8_t>>& args,
                                    const std::vector<int>& output_indices, int repeat, int threads,
                                    double timeout_s) {
  if (runner.empty()) throw std::runtime_error("run_kernel_out_of_process: no runner given");
  for (const int i : output_indices) {
    if (i < 0 || static_cast<std::size_t>(i) >= args.size()) {
      throw std::runtime_error("run_kernel_out_of_process: output index " + std::to_string(i) +
                               " is not one of the " + std::to_string(args.size()) + " arguments");
    }
  }
  std::vector<std::string> argv;
  if (under_qemu) {
    argv = aarch64_qemu_prefix();
    if (argv.empty()) throw std::runtime_error("qemu-aarch64 is not on PATH");
  }

  TempDir dir("kiln-kexec");
  argv.insert(argv.end(), {runner, "--lib", so_path, "--fn", fn, "--repeat", std::to_string(repeat),
                           "--threads", std::to_string(threads)});
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string path = dir.file("arg" + std::to_string(i) + ".bin");
    write_bytes(path, args[i]);
    argv.insert(argv.end(), {"--arg", path});
  }
  for (const int i : output_indices) {
    argv.insert(argv.end(),
                {"--out", std::to_string(i) + "=" + dir.file("out" + std::to_string(i) + ".bin")});
  }

  const std::string out_path = dir.file("stdout.txt");
  const std::string err_path = dir.file("stderr.txt");
  const int status = spawn_and_wait(argv, out_path, err_path, timeout_s);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    throw std::runtime_error("kernel '" + fn + "' of '" + so_path + "': '" + join(argv) + "' " +
                             describe_status(status) + "; stderr:\n" + read_text(err_path));
  }

  KernelRun run;
  run.median_ms = parse_median_ms(read_text(out_path));
  for (const int i : output_indices) {
    run.outputs.push_back(read_bytes(dir.file("out" + std::to_string(i) + ".bin")));
  }
  return run;
}

}  // namespace kiln
