// Farm overhead (numbers to read, not asserted): measurements per second end to end for a
// trivial kernel with 1 and 2 native workers, and the latency a job gains from the sandbox,
// the worker's gRPC service and the tracker, compared with calling the kernel in process:
//
//   in process        the kernel called through kiln::KernelModule in this process
//   sandbox only      run_in_sandbox() here: a fresh kiln-kernel-runner child per job
//   direct worker     client -> kiln-worker --listen (no tracker) -> sandbox
//   tracker, N        client -> tracker -> N kiln-worker processes -> sandbox
//
//   kiln_farm_overhead [JOBS] [ROUNDS]    (default 200 jobs per batch, 30 single-job rounds)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>

#include "tests/farm/farm_harness.h"
#include "kiln/runtime.h"
#include "rpc/farm/data.h"
#include "rpc/farm/sandbox.h"

using namespace kiln::farm;
using Clock = std::chrono::steady_clock;

namespace {

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

std::vector<pb::Job> trivial_jobs(int n) {
  std::vector<pb::Job> jobs;
  for (int i = 0; i < n; ++i) {
    jobs.push_back(testing::fixture_job("add_one", 64, i));
    jobs.back().set_repeat(1);
  }
  return jobs;
}

// Median, min and max in ms of `rounds` calls of `one`.
void latency(const char* what, int rounds, const std::function<void()>& one) {
  std::vector<double> ms;
  for (int i = 0; i < rounds; ++i) {
    const auto t0 = Clock::now();
    one();
    ms.push_back(seconds_since(t0) * 1e3);
  }
  std::sort(ms.begin(), ms.end());
  std::printf("%-22s one job: median %7.2f ms  (min %.2f, max %.2f, %d rounds)\n", what,
              ms[ms.size() / 2], ms.front(), ms.back(), rounds);
}

void expect_ok(const std::vector<pb::Result>& results) {
  for (const auto& r : results) {
    if (r.error() != pb::OK) {
      std::fprintf(stderr, "job failed: %s %s\n", error_kind_name(r.error()).c_str(),
                   r.message().c_str());
      std::exit(1);
    }
  }
}

void throughput(const char* what, FarmClient& client, const std::string& key, int jobs_n) {
  const auto jobs = trivial_jobs(jobs_n);
  expect_ok(client.submit(key, {jobs[0]})->wait_all());  // warm the page cache and connections
  const auto t0 = Clock::now();
  const auto results = client.submit(key, jobs)->wait_all();
  const double s = seconds_since(t0);
  expect_ok(results);
  std::printf("%-22s %d jobs in %.3f s = %6.1f measurements/s\n", what, jobs_n, s, jobs_n / s);
}

void tracker(int workers, int jobs_n, int rounds) {
  testing::Farm farm;
  for (int i = 0; i < workers; ++i) farm.start_worker("host");
  farm.wait_for_workers("host", workers);
  FarmClient client = farm.client();
  const std::string what = "tracker, " + std::to_string(workers) + " worker(s):";
  throughput(what.c_str(), client, "host", jobs_n);
  const auto jobs = trivial_jobs(rounds);
  int i = 0;
  latency(what.c_str(), rounds, [&] { expect_ok(client.submit("host", {jobs[i++]})->wait_all()); });
}

void direct(int jobs_n, int rounds) {
  testing::DirectWorker worker;
  FarmClient client(worker.address(), worker.token());
  throughput("direct worker:", client, "host", jobs_n);
  const auto jobs = trivial_jobs(rounds);
  int i = 0;
  latency("direct worker:", rounds,
          [&] { expect_ok(client.submit("host", {jobs[i++]})->wait_all()); });
}

void sandbox_only(int rounds) {
  SandboxConfig config;
  config.helper = KILN_FARM_SANDBOX;
  const std::atomic<bool> cancel{false};
  const auto jobs = trivial_jobs(rounds);
  int i = 0;
  latency("sandbox only:", rounds, [&] {
    const pb::Result r = run_in_sandbox(jobs[i++], config, cancel);
    expect_ok({r});
  });
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
  std::printf("%-22s one call: %.3f us\n", "in process:", seconds_since(t0) / reps * 1e6);
}

}  // namespace

int main(int argc, char** argv) {
  const int jobs = argc > 1 ? std::atoi(argv[1]) : 200;
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 30;
  std::printf("trivial kernel: add_one on 64 floats, 1 repeat of 1 call per job\n");
  in_process();
  sandbox_only(rounds);
  direct(jobs, rounds);
  tracker(1, jobs, rounds);
  tracker(2, jobs, rounds);
  return 0;
}
