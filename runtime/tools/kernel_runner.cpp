// kiln-kernel-runner: kiln's one child process for running a kernel. It runs one kernel of a
// kernel .so, checks nothing, and times it; whoever spawned it compares the outputs.
//
// Everything that runs kernels out of process uses it: tests and benchmarks (natively, and
// cross-built for AArch64 under qemu-aarch64), and every farm worker, which runs each job in
// a fresh one (a candidate that crashes, hangs or eats memory takes only this process down).
// It depends on kiln_rt and the standard library only, hence the hand-written argument
// parsing and JSON, so it builds for any board.
//
//   kiln-kernel-runner --lib K.so --fn NAME [--threads T] [--warmup W] [--repeat R]
//                      [--number N] [--min-repeat-ms MS] [--flush-cache] [--cooldown-ms MS]
//                      [--mem-mb MB] --arg FILE [--arg FILE ...] [--out INDEX=FILE ...]
//   kiln-kernel-runner --lib model.so --params model.params [same options]
//
// The second form runs a compiled model (kiln::Model) instead of one kernel (`kiln run
// --farm`): the --arg files are the model's inputs in order, and --out INDEX=FILE names the
// model's output INDEX; everything else is the same.
//
// Every --arg file is loaded into its own 64-byte-aligned buffer, in order. The kernel runs
// once on those inputs (the check run, whose results the --out files receive), W more times
// untimed, then R timed repeats of N calls each; N is raised until one repeat lasts at least
// --min-repeat-ms (AutoTVM's rule). --flush-cache sweeps a large buffer before each repeat;
// --cooldown-ms sleeps between repeats; --mem-mb limits the address space. Each --out
// INDEX=FILE gets buffer INDEX as the check run left it (through FILE.tmp and a rename, so a
// reader never sees half a file). stdout gets one JSON line:
//   {"fn":"NAME","repeat":R,"number":N,"times_ms":[...],"median_ms":M,"costs_s":[...]}
// where times_ms and costs_s are the time of one call in each repeat.
// Exit status: 0 ok; 10 the .so or its kernel does not load; 11 the kernel returned non-zero;
// 12 bad arguments; 1 anything else. The message is on stderr.
#include <sys/prctl.h>
#include <sys/resource.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "kiln/model.h"
#include "kiln/runtime.h"
#include "kiln/timing.h"
#include "runtime/process/kernel_exec.h"

namespace {

constexpr const char* kUsage =
    "usage: kiln-kernel-runner --lib K.so --fn NAME [--threads T] [--warmup W] [--repeat R]\n"
    "                          [--number N] [--min-repeat-ms MS] [--flush-cache]\n"
    "                          [--cooldown-ms MS] [--mem-mb MB]\n"
    "                          --arg FILE [--arg FILE ...] [--out INDEX=FILE ...]\n"
    "       kiln-kernel-runner --lib model.so --params model.params [the same options]\n";

// Exit statuses the farm worker turns into error kinds.
constexpr int kExitLoad = kiln::kRunnerExitLoad, kExitKernel = kiln::kRunnerExitKernel,
              kExitUsage = kiln::kRunnerExitUsage;

struct Output {
  std::size_t index;
  std::string path;
};

struct Options {
  std::string lib;
  std::string fn;
  std::string params;  // set: run the compiled model lib + params, not one kernel
  int threads = 0;  // 0: the runtime's default (KILN_NUM_THREADS, else usable CPUs)
  int warmup = 0;
  int repeat = 1;
  int number = 1;
  double min_repeat_ms = 0;
  bool flush_cache = false;
  double cooldown_ms = 0;
  long mem_mb = 0;
  std::vector<std::string> args;
  std::vector<Output> outputs;
};

class UsageError : public std::runtime_error {
  using std::runtime_error::runtime_error;
};

int parse_int(const std::string& option, const std::string& text, int min) {
  errno = 0;
  char* end = nullptr;
  const long v = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno == ERANGE || v < min || v > 1000000000L) {
    throw UsageError(option + " expects an integer >= " + std::to_string(min) + ", got '" + text +
                     "'");
  }
  return static_cast<int>(v);
}

double parse_ms(const std::string& option, const std::string& text) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !(v >= 0) || v > 3.6e6)
    throw UsageError(option + " expects milliseconds >= 0, got '" + text + "'");
  return v;
}

Output parse_output(const std::string& spec) {
  const auto eq = spec.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size()) {
    throw UsageError("--out expects INDEX=FILE, got '" + spec + "'");
  }
  const int index = parse_int("--out INDEX", spec.substr(0, eq), 0);
  return {static_cast<std::size_t>(index), spec.substr(eq + 1)};
}

Options parse_options(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--help" || flag == "-h") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    }
    if (flag == "--flush-cache") {
      o.flush_cache = true;
      continue;
    }
    if (i + 1 >= argc)
      throw UsageError(flag.rfind("--", 0) == 0 ? flag + " needs a value"
                                                : "unexpected argument '" + flag + "'");
    const std::string value = argv[++i];
    if (flag == "--lib") {
      o.lib = value;
    } else if (flag == "--fn") {
      o.fn = value;
    } else if (flag == "--params") {
      o.params = value;
    } else if (flag == "--threads") {
      o.threads = parse_int(flag, value, 0);
    } else if (flag == "--warmup") {
      o.warmup = parse_int(flag, value, 0);
    } else if (flag == "--repeat") {
      o.repeat = parse_int(flag, value, 1);
    } else if (flag == "--number") {
      o.number = parse_int(flag, value, 1);
    } else if (flag == "--min-repeat-ms") {
      o.min_repeat_ms = parse_ms(flag, value);
    } else if (flag == "--cooldown-ms") {
      o.cooldown_ms = parse_ms(flag, value);
    } else if (flag == "--mem-mb") {
      o.mem_mb = parse_int(flag, value, 0);
    } else if (flag == "--arg") {
      o.args.push_back(value);
    } else if (flag == "--out") {
      o.outputs.push_back(parse_output(value));
    } else {
      throw UsageError("unknown option '" + flag + "'");
    }
  }
  if (o.lib.empty()) throw UsageError("--lib is required");
  if (!o.params.empty()) {
    if (!o.fn.empty()) throw UsageError("--fn and --params exclude each other");
    return o;  // output indices name model outputs: checked once the model is loaded
  }
  if (o.fn.empty()) throw UsageError("--fn is required");
  for (const auto& out : o.outputs) {
    if (out.index >= o.args.size()) {
      throw UsageError("--out " + std::to_string(out.index) + "=" + out.path +
                       ": index out of range, there are " + std::to_string(o.args.size()) +
                       " --arg buffer(s)");
    }
  }
  return o;
}

std::string errno_text() {
  return std::strerror(errno);
}

kiln::AlignedBuffer read_file(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) throw std::runtime_error("cannot open argument file '" + path + "': " + errno_text());
  long size = -1;
  if (std::fseek(f, 0, SEEK_END) == 0) size = std::ftell(f);
  if (size < 0 || std::fseek(f, 0, SEEK_SET) != 0) {
    std::fclose(f);
    throw std::runtime_error("cannot size argument file '" + path + "': " + errno_text());
  }
  kiln::AlignedBuffer buffer(static_cast<std::size_t>(size));
  const std::size_t got = std::fread(buffer.data(), 1, buffer.size(), f);
  const bool failed = got != buffer.size() || std::ferror(f);
  std::fclose(f);
  if (failed) throw std::runtime_error("cannot read argument file '" + path + "'");
  return buffer;
}

void write_file_atomically(const std::string& path, const kiln::AlignedBuffer& buffer) {
  const std::string tmp = path + ".tmp";
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) throw std::runtime_error("cannot create output file '" + tmp + "': " + errno_text());
  const bool wrote = std::fwrite(buffer.data(), 1, buffer.size(), f) == buffer.size();
  const bool closed = std::fclose(f) == 0;
  if (!wrote || !closed) {
    std::remove(tmp.c_str());
    throw std::runtime_error("cannot write output file '" + tmp + "'");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = errno_text();
    std::remove(tmp.c_str());
    throw std::runtime_error("cannot rename '" + tmp + "' to '" + path + "': " + why);
  }
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (const unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

// The limits of a sandboxed child: it dies with its parent (a killed worker leaves no
// candidate spinning), leaves no core file, and with --mem-mb fails to allocate past it.
void limit_resources(long mem_mb) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  const rlimit no_core{0, 0};
  setrlimit(RLIMIT_CORE, &no_core);
  if (mem_mb > 0) {
    const rlim_t bytes = static_cast<rlim_t>(mem_mb) << 20;
    const rlimit as{bytes, bytes};
    setrlimit(RLIMIT_AS, &as);
  }
}

struct Failure : std::runtime_error {
  Failure(int code, const std::string& what) : std::runtime_error(what), code(code) {}
  int code;
};

// What the runner calls: one kernel on the --arg buffers, or a model from inputs to outputs.
struct Callee {
  std::function<void()> call;
  std::function<const kiln::AlignedBuffer&(std::size_t)> output;  // what --out INDEX reads
  std::string name;
};

Callee load_kernel(const Options& o, std::vector<kiln::AlignedBuffer>& buffers) {
  static kiln::ThreadPool pool(o.threads);
  // This thread runs chunk 0 of every call: on a board whose cores differ it is held to the
  // pool's fast cores for the whole run, as Model::run holds its caller.
  static kiln::ThreadPool::Scope hold(&pool, /*hold_cpus=*/true);
  // Lives until exit, as the pool does: a module must not be unloaded under running threads.
  static std::unique_ptr<kiln::KernelModule> module;
  static std::vector<void*> pointers;
  for (auto& b : buffers) pointers.push_back(b.data());
  kiln::Kernel kernel = [&] {
    try {
      module = std::make_unique<kiln::KernelModule>(o.lib, pool);
      return module->kernel(o.fn);
    } catch (const std::exception& e) {
      throw Failure(kExitLoad, e.what());
    }
  }();
  auto call = [kernel, fn = o.fn] {
    if (const int32_t status = kernel.run(pointers.data()); status != 0)
      throw Failure(kExitKernel, "kernel '" + fn + "' returned status " + std::to_string(status));
  };
  return {call, [&buffers](std::size_t i) -> const kiln::AlignedBuffer& { return buffers[i]; },
          o.fn};
}

Callee load_model(const Options& o, std::vector<kiln::AlignedBuffer>& inputs) {
  static std::unique_ptr<kiln::Model> model;
  static std::vector<kiln::AlignedBuffer> outputs;
  static std::vector<const void*> in;
  static std::vector<void*> out;
  try {
    model = std::make_unique<kiln::Model>(kiln::Model::load(o.lib, o.params, o.threads));
  } catch (const std::exception& e) {
    throw Failure(kExitLoad, e.what());
  }
  const auto& want = model->inputs();
  if (inputs.size() != want.size()) {
    throw UsageError("the model takes " + std::to_string(want.size()) + " input(s), got " +
                     std::to_string(inputs.size()) + " --arg file(s)");
  }
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].size() != want[i].bytes) {
      throw UsageError("input " + std::to_string(i) + " ('" + want[i].name + "') needs " +
                       std::to_string(want[i].bytes) + " bytes, its --arg file has " +
                       std::to_string(inputs[i].size()));
    }
    in.push_back(inputs[i].data());
  }
  for (const kiln::TensorInfo& t : model->outputs()) outputs.emplace_back(t.bytes);
  for (auto& b : outputs) out.push_back(b.data());
  for (const auto& spec : o.outputs) {
    if (spec.index >= outputs.size()) {
      throw UsageError("--out " + std::to_string(spec.index) + ": the model has " +
                       std::to_string(outputs.size()) + " output(s)");
    }
  }
  auto call = [] {
    try {
      model->run(std::span<const void* const>(in), std::span<void* const>(out));
    } catch (const std::exception& e) {
      throw Failure(kExitKernel, e.what());
    }
  };
  return {call, [](std::size_t i) -> const kiln::AlignedBuffer& { return outputs[i]; },
          model->name()};
}

int run(const Options& o) {
  limit_resources(o.mem_mb);
  std::vector<kiln::AlignedBuffer> buffers;
  for (const auto& path : o.args) buffers.push_back(read_file(path));
  const Callee callee = o.params.empty() ? load_kernel(o, buffers) : load_model(o, buffers);
  const auto& call = callee.call;

  // The check run on the inputs as given; its outputs are what --out files receive.
  call();
  std::vector<std::vector<uint8_t>> outputs;
  for (const auto& out : o.outputs) {
    const kiln::AlignedBuffer& b = callee.output(out.index);
    const auto* p = static_cast<const uint8_t*>(b.data());
    outputs.emplace_back(p, p + b.size());
  }
  kiln::TimingOptions timing;
  timing.warmup = o.warmup;
  timing.number = o.number;
  timing.repeat = o.repeat;
  timing.min_repeat_ms = o.min_repeat_ms;
  timing.cooldown_ms = o.cooldown_ms;
  timing.flush_cache = o.flush_cache;
  const kiln::Timing timed = kiln::time_calls(call, timing);
  const int number = timed.number;
  std::vector<double> times_ms;
  for (double s : timed.seconds) times_ms.push_back(s * 1e3);

  for (std::size_t k = 0; k < o.outputs.size(); ++k) {
    kiln::AlignedBuffer b(outputs[k].size());
    if (!outputs[k].empty()) std::memcpy(b.data(), outputs[k].data(), outputs[k].size());
    write_file_atomically(o.outputs[k].path, b);
  }

  std::string line = "{\"fn\":" + json_string(callee.name) + ",\"repeat\":" + std::to_string(o.repeat) +
                     ",\"number\":" + std::to_string(number) + ",\"times_ms\":[";
  char num[64];
  for (std::size_t i = 0; i < times_ms.size(); ++i) {
    std::snprintf(num, sizeof num, "%s%.6f", i ? "," : "", times_ms[i]);
    line += num;
  }
  std::snprintf(num, sizeof num, "],\"median_ms\":%.6f,\"costs_s\":[", timed.median_ms());
  line += num;
  for (std::size_t i = 0; i < times_ms.size(); ++i) {
    std::snprintf(num, sizeof num, "%s%.9e", i ? "," : "", times_ms[i] / 1e3);
    line += num;
  }
  line += "]}\n";
  std::fputs(line.c_str(), stdout);
  return std::fflush(stdout) == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(parse_options(argc, argv));
  } catch (const UsageError& e) {
    std::fprintf(stderr, "kiln-kernel-runner: %s\n%s", e.what(), kUsage);
    return kExitUsage;
  } catch (const Failure& e) {
    std::fprintf(stderr, "kiln-kernel-runner: %s\n", e.what());
    return e.code;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kiln-kernel-runner: %s\n", e.what());
  }
  return 1;
}
