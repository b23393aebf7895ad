// kiln-farm-sandbox: the child process in which a worker runs one measurement job, so that a
// candidate that crashes, hangs or eats memory takes only this process down. The worker
// spawns it (under qemu-aarch64 for the AArch64 worker), kills it on timeout, and reads back
// what it wrote. Links the runtime and protobuf only.
//
//   kiln-farm-sandbox --job JOB.pb --lib KERNEL.so --out-dir DIR [--mem-mb N]
//
// JOB.pb is a serialized kiln.farm.pb.Job (its `so` field unused). The inputs are filled
// deterministically (data.h); the kernel runs once on fresh buffers, whose outputs are written
// to DIR/out<K>.bin (K counts output arguments), then `repeat` timed repeats of `number` calls
// on the same buffers; DIR/result.pb gets a Result holding the costs and number.
// Exit status: 0 ok; 10 the .so or entry does not load; 11 the kernel returned non-zero;
// 12 the job is malformed; 1 anything else. The message is on stderr.
#include <sys/prctl.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "kiln/runtime.h"
#include "rpc/farm/data.h"
#include "rpc/farm/validate.h"

namespace {

using namespace kiln::farm;

struct Failure : std::runtime_error {
  Failure(int code, const std::string& what) : std::runtime_error(what), code(code) {}
  int code;
};

struct Options {
  std::string job, lib, out_dir;
  long mem_mb = 0;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--job")
      o.job = value;
    else if (flag == "--lib")
      o.lib = value;
    else if (flag == "--out-dir")
      o.out_dir = value;
    else if (flag == "--mem-mb")
      o.mem_mb = std::atol(value.c_str());
    else
      throw Failure(12, "unknown option '" + flag + "'");
  }
  if (argc % 2 == 0 || o.job.empty() || o.lib.empty() || o.out_dir.empty()) {
    throw Failure(12,
                  "usage: kiln-farm-sandbox --job JOB.pb --lib K.so --out-dir DIR [--mem-mb N]");
  }
  return o;
}

void write_file(const std::string& path, const void* data, std::size_t size) {
  std::ofstream out(path, std::ios::binary);
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
  if (!out) throw Failure(1, "cannot write " + path);
}

void limit_resources(long mem_mb) {
  // A worker killed mid-job takes its candidate with it (no orphan spinning forever).
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  const rlimit no_core{0, 0};
  setrlimit(RLIMIT_CORE, &no_core);  // a crashing candidate leaves no core file behind
  if (mem_mb > 0) {
    const rlim_t bytes = static_cast<rlim_t>(mem_mb) << 20;
    const rlimit as{bytes, bytes};
    setrlimit(RLIMIT_AS, &as);  // a candidate that allocates without bound fails instead
  }
}

using Clock = std::chrono::steady_clock;

int run(const Options& o) {
  limit_resources(o.mem_mb);
  kiln::farm::pb::Job job;
  {
    std::ifstream in(o.job, std::ios::binary);
    if (!in || !job.ParseFromIstream(&in)) throw Failure(12, "cannot parse job file " + o.job);
  }
  job.set_so("-");  // validate_job wants a non-empty .so; ours is the file --lib names
  if (const std::string why = validate_job(job); !why.empty()) throw Failure(12, why);

  std::vector<kiln::AlignedBuffer> buffers;
  std::vector<void*> pointers;
  for (int i = 0; i < job.args_size(); ++i) {
    const std::vector<uint8_t> bytes = fill_arg(job.args(i), job.seed(), i);
    buffers.emplace_back(std::max<std::size_t>(bytes.size(), 1));
    if (!bytes.empty()) std::memcpy(buffers.back().data(), bytes.data(), bytes.size());
  }
  for (auto& b : buffers) pointers.push_back(b.data());

  kiln::ThreadPool pool(std::max<int>(1, static_cast<int>(job.threads())));
  kiln::Kernel kernel = [&] {
    try {
      static kiln::KernelModule module(o.lib, pool);  // lives until exit, as the pool does
      return module.kernel(job.entry());
    } catch (const std::exception& e) {
      throw Failure(10, e.what());
    }
  }();
  auto call = [&] {
    if (const int32_t status = kernel.run(pointers.data()); status != 0) {
      throw Failure(11, "kernel '" + job.entry() + "' returned status " + std::to_string(status));
    }
  };

  // The check run, on fresh inputs.
  call();
  for (int i = 0, k = 0; i < job.args_size(); ++i) {
    if (!job.args(i).is_output()) continue;
    const int64_t bytes = arg_bytes(job.args(i), kMaxArgBytes);
    write_file(o.out_dir + "/out" + std::to_string(k++) + ".bin", buffers[i].data(),
               static_cast<std::size_t>(bytes));
  }

  // AutoTVM's rule: raise number until one repeat lasts at least min_repeat_ms.
  uint32_t number = std::max<uint32_t>(1, job.number());
  if (job.min_repeat_ms() > 0) {
    const auto t0 = Clock::now();
    call();
    const double once_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    const double need = std::ceil(job.min_repeat_ms() / std::max(once_ms, 1e-6));
    number = static_cast<uint32_t>(std::clamp<double>(need, number, 1000000));
  }
  std::vector<uint8_t> flush(job.flush_cache() ? (64u << 20) : 0);
  kiln::farm::pb::Result result;
  result.set_number(number);
  for (uint32_t r = 0; r < job.repeat(); ++r) {
    if (job.cooldown_ms() > 0 && r > 0) {
      std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(job.cooldown_ms()));
    }
    for (std::size_t i = 0; i < flush.size(); i += 64) flush[i] += 1;  // evicts the caches
    const auto t0 = Clock::now();
    for (uint32_t n = 0; n < number; ++n) call();
    result.add_costs(std::chrono::duration<double>(Clock::now() - t0).count() / number);
  }
  std::string bytes;
  result.SerializeToString(&bytes);
  write_file(o.out_dir + "/result.pb", bytes.data(), bytes.size());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(parse(argc, argv));
  } catch (const Failure& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return e.code;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}
