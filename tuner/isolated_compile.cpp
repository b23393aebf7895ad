#include "tuner/isolated_compile.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <exception>
#include <functional>
#include <optional>

#include "compiler/codegen/codegen.h"
#include "compiler/codegen/link.h"
#include "compiler/base/error.h"
#include "tuner/predict.h"

namespace kiln::tuner {
namespace {

// What the child sends: one tag byte, a 64-bit length, then the object or the error text.
// The length matters: the write end of the pipe may also sit in a sibling child forked by
// another builder thread meanwhile, so the end of the message cannot be told by EOF.
constexpr char kObject = 'o';
constexpr char kError = 'e';

bool write_all(int fd, const void* data, size_t n) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

// What a child computes: the bytes it sends back (throws: an error message instead).
using ChildWork = std::function<std::vector<uint8_t>()>;

[[noreturn]] void child_main(int fd, const ChildWork& work) {
  // Ctrl-C in the terminal reaches the whole process group: the child should just die, not
  // run the tuner's handler on its copy of the tuner.
  signal(SIGINT, SIG_DFL);
  signal(SIGTERM, SIG_DFL);
  // If the tuner dies, so does its compile.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  // Keep only the pipe: a copy of the tuner's sockets and of its pipes to measurement
  // children would keep them open (no EOF for their readers) for as long as this compile runs.
  if (fd != 3) {
    ::dup2(fd, 3);
    fd = 3;
  }
  ::close_range(4, ~0u, 0);
  char tag = kObject;
  std::vector<uint8_t> payload;
  try {
    payload = work();
  } catch (const std::exception& e) {
    tag = kError;
    const std::string what = e.what();
    payload.assign(what.begin(), what.end());
  }
  const uint64_t n = payload.size();
  const bool sent = write_all(fd, &tag, 1) && write_all(fd, &n, sizeof n) &&
                    write_all(fd, payload.data(), payload.size());
  // _exit: no destructors or atexit handlers of the parent's state run in the child.
  _exit(sent ? 0 : 3);
}

// Reads the child's message until it is complete, the child is gone or the deadline passes
// (returns false then). The child is reaped here when it exits before sending everything
// (`*status` set): a sibling holding the pipe's write end would keep EOF from coming.
bool read_message(int fd, pid_t pid, std::chrono::steady_clock::time_point deadline,
                  std::string& out, std::optional<int>* status) {
  char buf[1 << 16];
  for (;;) {
    if (out.size() >= 1 + sizeof(uint64_t)) {
      uint64_t n;
      std::memcpy(&n, out.data() + 1, sizeof n);
      if (out.size() >= 1 + sizeof n + n) return true;
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd p{fd, POLLIN, 0};
    const int r = ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left.count(), 50)));
    if (r < 0 && errno == EINTR) continue;
    if (r == 0) {
      int st = 0;
      if (!*status && ::waitpid(pid, &st, WNOHANG) == pid) *status = st;
      // Gone, and nothing more is buffered in the pipe: the message is what came.
      if (*status && ::poll(&p, 1, 0) == 0) return true;
      continue;
    }
    const ssize_t got = ::read(fd, buf, sizeof buf);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return true;  // the pipe closed: the message is what came
    out.append(buf, static_cast<size_t>(got));
  }
}

std::string describe_exit(int status) {
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    return std::string("the compiler died of signal ") + std::to_string(sig) + " (" +
           strsignal(sig) + ")" + (sig == SIGABRT ? ": LLVM aborted on this kernel" : "");
  }
  return "the compiler exited with status " + std::to_string(WEXITSTATUS(status)) +
         " before sending its object";
}

// `work` in a forked child, killed at the deadline: its payload, or why there is none.
struct ChildResult {
  IsolatedCompile status;
  std::vector<uint8_t> payload;
};

ChildResult run_isolated(const ChildWork& work, double timeout_s) {
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(timeout_s));
  ChildResult result;
  IsolatedCompile& out = result.status;
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    out.error = MeasureErrorKind::CompileError;
    out.message = std::string("cannot create a pipe for the compile: ") + std::strerror(errno);
    return result;
  }
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    child_main(fds[1], work);
  }
  ::close(fds[1]);
  if (pid < 0) {
    ::close(fds[0]);
    out.error = MeasureErrorKind::CompileError;
    out.message = std::string("cannot fork the compile: ") + std::strerror(errno);
    return result;
  }
  std::string msg;
  std::optional<int> reaped;
  const bool in_time = read_message(fds[0], pid, deadline, msg, &reaped);
  ::close(fds[0]);
  if (!in_time && !reaped) ::kill(pid, SIGKILL);
  int status = reaped.value_or(0);
  while (!reaped && ::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!in_time) {
    out.error = MeasureErrorKind::CompileTimeout;
    out.message = "code generation ran past the build timeout (" + std::to_string(timeout_s) +
                  " s) and was killed";
    return result;
  }
  uint64_t n = 0;
  if (msg.size() >= 1 + sizeof n) std::memcpy(&n, msg.data() + 1, sizeof n);
  if (msg.size() < 1 + sizeof n || msg.size() != 1 + sizeof n + n) {
    out.error = MeasureErrorKind::CompileError;
    out.message = describe_exit(status);
    return result;
  }
  const char* payload = msg.data() + 1 + sizeof n;
  if (msg[0] == kError) {
    out.error = MeasureErrorKind::CompileError;
    out.message.assign(payload, n);
    return result;
  }
  result.payload.assign(payload, payload + n);
  return result;
}

}  // namespace

IsolatedCompile compile_isolated(const ir::LoweredFunc& func, const Target& t,
                                 const std::string& so_path, double timeout_s) {
  ChildResult r = run_isolated([&] { return codegen::compile_module({func}, t).object; }, timeout_s);
  if (r.status.error != MeasureErrorKind::Ok) return r.status;
  try {
    codegen::link_shared_object({std::move(r.payload)}, so_path);
  } catch (const std::exception& e) {
    r.status.error = MeasureErrorKind::CompileError;
    r.status.message = e.what();
  }
  return r.status;
}

IsolatedCompile predict_isolated(const BuiltKernel& k, const Target& t, double timeout_s,
                                 double* cycles) {
  // The child sends the cycles per call as 8 bytes, or the reason as an error.
  ChildResult r = run_isolated(
      [&] {
        KernelPrediction p = predict_kernel(k, t);
        if (!p.predicted()) throw UserError("cannot be predicted: " + p.why_not);
        std::vector<uint8_t> bytes(sizeof p.cycles);
        std::memcpy(bytes.data(), &p.cycles, sizeof p.cycles);
        return bytes;
      },
      timeout_s);
  if (r.status.error == MeasureErrorKind::Ok) {
    internal_check(r.payload.size() == sizeof *cycles) << "a prediction of " << r.payload.size() << " bytes";
    std::memcpy(cycles, r.payload.data(), sizeof *cycles);
  }
  return r.status;
}

}  // namespace kiln::tuner
