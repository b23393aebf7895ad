// kiln-kernel-runner: runs one kernel of a kernel .so out of process and times it.
//
// Tests and benchmarks use it to run kernels in a process of their own (a crashing kernel
// takes only the runner down) and, cross-built for AArch64, under qemu-aarch64. It depends on
// kiln_rt and the standard library only, hence the hand-written argument parsing and JSON.
//
//   kiln-kernel-runner --lib K.so --fn NAME [--threads T] [--warmup W] [--repeat R]
//                      --arg FILE [--arg FILE ...] [--out INDEX=FILE ...]
//
// Every --arg file is loaded into its own 64-byte-aligned buffer, in order; the kernel runs
// W + R times; each --out INDEX=FILE then writes buffer INDEX to FILE (through FILE.tmp and a
// rename, so a reader never sees half a file). stdout gets one JSON line:
//   {"fn":"NAME","repeat":R,"times_ms":[...],"median_ms":M}
// Any error: a message on stderr, exit status 1.
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "kiln/runtime.h"

namespace {

constexpr const char* kUsage =
    "usage: kiln-kernel-runner --lib K.so --fn NAME [--threads T] [--warmup W] [--repeat R]\n"
    "                          --arg FILE [--arg FILE ...] [--out INDEX=FILE ...]\n";

struct Output {
  std::size_t index;
  std::string path;
};

struct Options {
  std::string lib;
  std::string fn;
  int threads = 0;  // 0: the runtime's default (KILN_NUM_THREADS, else usable CPUs)
  int warmup = 0;
  int repeat = 1;
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
    if (i + 1 >= argc)
      throw UsageError(flag.rfind("--", 0) == 0 ? flag + " needs a value"
                                                : "unexpected argument '" + flag + "'");
    const std::string value = argv[++i];
    if (flag == "--lib") {
      o.lib = value;
    } else if (flag == "--fn") {
      o.fn = value;
    } else if (flag == "--threads") {
      o.threads = parse_int(flag, value, 0);
    } else if (flag == "--warmup") {
      o.warmup = parse_int(flag, value, 0);
    } else if (flag == "--repeat") {
      o.repeat = parse_int(flag, value, 1);
    } else if (flag == "--arg") {
      o.args.push_back(value);
    } else if (flag == "--out") {
      o.outputs.push_back(parse_output(value));
    } else {
      throw UsageError("unknown option '" + flag + "'");
    }
  }
  if (o.lib.empty()) throw UsageError("--lib is required");
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

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int run(const Options& o) {
  std::vector<kiln::AlignedBuffer> buffers;
  std::vector<void*> pointers;
  for (const auto& path : o.args) buffers.push_back(read_file(path));
  for (auto& b : buffers) pointers.push_back(b.data());

  kiln::ThreadPool pool(o.threads);
  kiln::KernelModule module(o.lib, pool);
  const kiln::Kernel kernel = module.kernel(o.fn);

  for (int i = 0; i < o.warmup; ++i) kernel(pointers.data());
  std::vector<double> times_ms;
  times_ms.reserve(o.repeat);
  for (int i = 0; i < o.repeat; ++i) {
    const auto start = std::chrono::steady_clock::now();
    kernel(pointers.data());
    const auto stop = std::chrono::steady_clock::now();
    times_ms.push_back(std::chrono::duration<double, std::milli>(stop - start).count());
  }

  for (const auto& out : o.outputs) write_file_atomically(out.path, buffers[out.index]);

  std::string line = "{\"fn\":" + json_string(o.fn) + ",\"repeat\":" + std::to_string(o.repeat) +
                     ",\"times_ms\":[";
  char num[64];
  for (std::size_t i = 0; i < times_ms.size(); ++i) {
    std::snprintf(num, sizeof num, "%s%.6f", i ? "," : "", times_ms[i]);
    line += num;
  }
  std::snprintf(num, sizeof num, "],\"median_ms\":%.6f}\n", median(times_ms));
  line += num;
  std::fputs(line.c_str(), stdout);
  return std::fflush(stdout) == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(parse_options(argc, argv));
  } catch (const UsageError& e) {
    std::fprintf(stderr, "kiln-kernel-runner: %s\n%s", e.what(), kUsage);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kiln-kernel-runner: %s\n", e.what());
  }
  return 1;
}
