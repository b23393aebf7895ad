// Farm overhead (numbers to read, not asserted): measurements per second end to end for a
// trivial kernel with 1 and 2 native workers, and the latency a job gains from the tracker
// and the sandbox compared with calling the kernel in process.
//
//   kiln_farm_overhead [JOBS]     (default 200)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "farm_harness.h"
#include "kiln/runtime.h"
#include "rpc/farm/data.h"

using namespace kiln::farm;
using Clock = std::chrono::steady_clock;

namespace {

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

void throughput(int workers, int jobs_n) {
  testing::Farm farm;
  for (int i = 0; i < workers; ++i) farm.start_worker("host");
  farm.wait_for_workers("host", workers);
  FarmClient client = farm.client();
  std::vector<pb::Job> jobs;
  for (int i = 0; i < jobs_n; ++i) jobs.push_back(testing::fixture_job("add_one", 64, i));
  for (auto& j : jobs) j.set_repeat(1);
  client.submit("host", {jobs[0]})->wait_all();  // warm the page cache and connections
  const auto t0 = Clock::now();
  const auto results = client.submit("host", jobs)->wait_all();
  const double s = seconds_since(t0);
  int ok = 0;
  for (const auto& r : results) ok += r.error() == pb::OK;
  std::printf("%d worker(s): %d jobs (%d ok) in %.3f s = %.1f measurements/s\n", workers, jobs_n,
              ok, s, jobs_n / s);

  // One job at a time: the latency of a round trip through tracker, worker and sandbox.
  std::vector<double> lat;
  for (int i = 0; i < 30; ++i) {
    const auto t1 = Clock::now();
    client.submit("host", {jobs[i]})->wait_all();
    lat.push_back(seconds_since(t1) * 1e3);
  }
  std::sort(lat.begin(), lat.end());
  std::printf("%d worker(s): one job end to end: median %.2f ms (min %.2f, max %.2f)\n", workers,
              lat[lat.size() / 2], lat.front(), lat.back());
}

void in_process() {
  kiln::ThreadPool pool(1);
  kiln::KernelModule module(KILN_FARM_FIXTURE, pool);
  const kiln::Kernel k = module.kernel("add_one");
  int64_t n = 64;
  std::vector<float> in(64, 1.0f), out(64);
  void* args[] = {&n, in.data(), out.data()};
  const int reps = 100000;
  const auto t0 = Clock::now();
  for (int i = 0; i < reps; ++i) k(args);
  std::printf("in process: one call %.3f us\n", seconds_since(t0) / reps * 1e6);
}

}  // namespace

int main(int argc, char** argv) {
  const int jobs = argc > 1 ? std::atoi(argv[1]) : 200;
  in_process();
  throughput(1, jobs);
  throughput(2, jobs);
  return 0;
}
