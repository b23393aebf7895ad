// The farm under load, on loopback with real processes: one tracker, 8 native workers, 4
// clients (threads, each its own FarmClient and so its own fair share) submitting trivial
// jobs in batches, while 2 workers are SIGKILLed and restarted. Asserts that every job comes
// back exactly once and correct, that clients are served fairly and that the tracker's memory
// stays bounded; prints throughput, fairness spread and the tracker's peak RSS.
//
// FarmLoad.Reduced (4 x 200 jobs) runs by default; FarmLoad.Full (4 x 10,000) is registered
// under the labels `slow` and `load` (tests/farm/CMakeLists.txt).
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "rpc/farm/data.h"
#include "tests/farm/farm_harness.h"

namespace kiln::farm {
namespace {

using Clock = std::chrono::steady_clock;

struct LoadShape {
  int clients = 4;
  int jobs_per_client = 200;
  int batch = 50;  // jobs per Submit; a client waits for a batch before sending the next
  int workers = 8;
  int kills = 2;  // workers SIGKILLed (and replaced) at even steps of the run
};

// A /proc/PID/status field in KiB (VmRSS, VmHWM), 0 when absent.
long proc_status_kib(pid_t pid, const std::string& field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(field + ":", 0) == 0) return std::stol(line.substr(field.size() + 1));
  }
  return 0;
}

// What one client saw.
struct ClientLog {
  std::map<uint64_t, int> seen;  // the job's seed -> results received
  std::vector<double> done_at;   // seconds since the start, one per result
  std::map<std::string, int> errors;
  std::string first_error;
  std::string failure;  // a client-side exception, if any
};

// One client: batches of trivial jobs (add_one on 16 floats, one call, checked against its
// reference) with seeds unique across the run, so that a result delivered twice or to the
// wrong job shows.
void run_client(const LocalFarm& farm, const LoadShape& shape, int me, Clock::time_point t0,
                std::atomic<int>& completed, ClientLog& log) {
  try {
    FarmClient client = farm.client();
    for (int sent = 0; sent < shape.jobs_per_client;) {
      const int n = std::min(shape.batch, shape.jobs_per_client - sent);
      std::vector<pb::Job> jobs;
      for (int i = 0; i < n; ++i) {
        pb::Job job = testing::fixture_job("add_one", 16, 1000000ULL * (me + 1) + sent + i);
        job.set_repeat(1);
        jobs.push_back(std::move(job));
      }
      sent += n;
      auto batch = client.submit("load", jobs);
      pb::Result r;
      while (batch->next(&r)) {
        log.done_at.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
        if (r.index() < jobs.size()) ++log.seen[jobs[r.index()].seed()];
        if (r.error() != pb::OK) {
          ++log.errors[error_kind_name(r.error())];
          if (log.first_error.empty()) log.first_error = r.message();
        }
        ++completed;
      }
    }
  } catch (const std::exception& e) {
    log.failure = e.what();
  }
}

void run_load(const LoadShape& shape) {
  testing::Farm farm(/*heartbeat_timeout_s=*/2);
  for (int i = 0; i < shape.workers; ++i) farm.start_worker("load");
  farm.wait_for_workers("load", shape.workers, 60);
  const pid_t tracker = farm.tracker_pid();
  const long rss_before_kib = proc_status_kib(tracker, "VmRSS");

  const int total = shape.clients * shape.jobs_per_client;
  std::atomic<int> completed{0};
  std::vector<ClientLog> logs(shape.clients);
  const auto t0 = Clock::now();
  std::vector<std::thread> clients;
  for (int c = 0; c < shape.clients; ++c) {
    clients.emplace_back(run_client, std::cref(farm), std::cref(shape), c, t0,
                         std::ref(completed), std::ref(logs[c]));
  }
  // The tracker's RSS as the run goes on: one sample per quarter of the results, to show
  // whether it levels off or keeps growing with the jobs run.
  std::atomic<bool> finished{false};
  std::vector<long> rss_at_quarter_kib;
  std::thread sampler([&] {
    for (int q = 1; q <= 4 && !finished; ++q) {
      while (completed < total * q / 4 && !finished)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      rss_at_quarter_kib.push_back(proc_status_kib(tracker, "VmRSS"));
    }
  });
  // Kill a worker (mid-job, most likely) at each of `kills` even steps of the run, and start
  // a replacement at once, as a board's supervisor would.
  std::vector<double> killed_at;
  for (int k = 0; k < shape.kills; ++k) {
    const int at = total * (k + 1) / (shape.kills + 1);
    while (completed < at && completed < total) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    farm.worker(k).kill_now(SIGKILL);
    farm.worker(k).wait_exit(10);
    killed_at.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
    farm.start_worker("load");
  }
  for (auto& t : clients) t.join();
  finished = true;
  sampler.join();
  const double wall_s = std::chrono::duration<double>(Clock::now() - t0).count();
  const long rss_after_kib = proc_status_kib(tracker, "VmRSS");
  const long hwm_kib = proc_status_kib(tracker, "VmHWM");

  // Exactly one result per job, each correct.
  int results = 0, missing = 0, duplicated = 0;
  for (int c = 0; c < shape.clients; ++c) {
    const ClientLog& log = logs[c];
    EXPECT_EQ(log.failure, "") << "client " << c;
    for (int j = 0; j < shape.jobs_per_client; ++j) {
      const auto it = log.seen.find(1000000ULL * (c + 1) + j);
      if (it == log.seen.end())
        ++missing;
      else if (it->second > 1)
        duplicated += it->second - 1;
    }
    results += static_cast<int>(log.done_at.size());
    for (const auto& [kind, count] : log.errors)
      ADD_FAILURE() << "client " << c << ": " << count << " x " << kind << " (" << log.first_error
                    << ")";
  }
  EXPECT_EQ(missing, 0);
  EXPECT_EQ(duplicated, 0);
  EXPECT_EQ(results, total);

  // Fairness: when each client finished, and each one's share of the results delivered
  // while all of them were still submitting (until the first one finished).
  std::vector<double> finish;
  for (const ClientLog& log : logs) finish.push_back(log.done_at.empty() ? 0 : log.done_at.back());
  const double first_done = *std::min_element(finish.begin(), finish.end());
  const double last_done = *std::max_element(finish.begin(), finish.end());
  std::vector<int> contended;
  for (const ClientLog& log : logs) {
    contended.push_back(static_cast<int>(
        std::count_if(log.done_at.begin(), log.done_at.end(), [&](double t) { return t <= first_done; })));
  }
  const int share_min = *std::min_element(contended.begin(), contended.end());
  const int share_max = *std::max_element(contended.begin(), contended.end());
  // The same before the first kill: a client whose job a killed worker held waits for the
  // tracker to notice (the heartbeat timeout) before its batch completes, so shares over the
  // whole run also measure where the kills fell; before them only the scheduler counts.
  const double first_kill = killed_at.empty() ? last_done : killed_at.front();
  std::vector<int> before_kill;
  for (const ClientLog& log : logs) {
    before_kill.push_back(static_cast<int>(std::count_if(
        log.done_at.begin(), log.done_at.end(), [&](double t) { return t <= first_kill; })));
  }
  const int calm_min = *std::min_element(before_kill.begin(), before_kill.end());
  const int calm_max = *std::max_element(before_kill.begin(), before_kill.end());

  std::printf("farm load: %d clients x %d jobs (batches of %d), %d workers, %d killed at",
              shape.clients, shape.jobs_per_client, shape.batch, shape.workers, shape.kills);
  for (double t : killed_at) std::printf(" %.1f s", t);
  std::printf("\n  %d results in %.2f s: %.0f jobs/s; missing %d, duplicated %d\n", results,
              wall_s, results / wall_s, missing, duplicated);
  std::printf("  clients finished at");
  for (double t : finish) std::printf(" %.2f", t);
  std::printf(" s (spread %.1f%% of the last)\n", 100 * (last_done - first_done) / last_done);
  std::printf("  results per client until the first finished:");
  for (int n : contended) std::printf(" %d", n);
  std::printf(" (min/max %.3f)\n", share_max ? double(share_min) / share_max : 0.0);
  std::printf("  results per client before the first kill:");
  for (int n : before_kill) std::printf(" %d", n);
  std::printf(" (min/max %.3f)\n", calm_max ? double(calm_min) / calm_max : 0.0);
  std::printf("  tracker RSS %.1f MiB before, %.1f MiB after, peak (VmHWM) %.1f MiB; at each "
              "quarter of the results:", rss_before_kib / 1024.0, rss_after_kib / 1024.0,
              hwm_kib / 1024.0);
  for (long kib : rss_at_quarter_kib) std::printf(" %.1f", kib / 1024.0);
  std::printf(" MiB\n");
  std::fflush(stdout);

  // Round-robin between clients: while all of them have work queued and no worker was lost,
  // no client gets less than half the share of another (one batch of slack).
  EXPECT_GE(calm_min * 2 + shape.batch, calm_max);
  // The tracker keeps only queued and unwatched work: its memory must not grow with the
  // number of jobs run (batches here hold well under 10 MiB of .so bytes).
  EXPECT_LT(hwm_kib - rss_before_kib, 256 * 1024);
}

TEST(FarmLoad, Reduced) {
  run_load(LoadShape{});
}

TEST(FarmLoad, Full) {
  LoadShape shape;
  shape.jobs_per_client = 10000;
  shape.batch = 100;
  run_load(shape);
}

}  // namespace
}  // namespace kiln::farm
