// The tracker's state without gRPC (rpc/farm/scheduler.h): how many bytes of jobs it holds,
// that a Submit past its limit is refused until finished, cancelled or lost jobs make room,
// that batches nobody watches do not stay for ever, and that a queued job wakes a waiting
// worker of its own key only.
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <thread>

#include "rpc/farm/scheduler.h"

namespace kiln::farm {
namespace {

pb::Job job_of(std::size_t so_bytes) {
  pb::Job job;
  job.set_so(std::string(so_bytes, 'x'));
  job.set_entry("k");
  return job;
}

std::vector<pb::Job> batch_of(int n, std::size_t so_bytes) {
  return std::vector<pb::Job>(static_cast<std::size_t>(n), job_of(so_bytes));
}

Scheduler small_scheduler(uint64_t max_held_bytes) {
  SchedulerOptions o;
  o.max_held_bytes = max_held_bytes;
  o.heartbeat_timeout_s = 0;  // reap() drops every worker
  return Scheduler(o);
}

// A worker leases one job and reports it done.
void run_one(Scheduler& s, const std::string& worker) {
  pb::Job job;
  ASSERT_EQ(s.lease(worker, Scheduler::Clock::now(), &job), Scheduler::Wait::kGot);
  pb::Result r;
  r.set_job_id(job.job_id());
  ASSERT_TRUE(s.report(worker, r));
}

std::string register_worker(Scheduler& s, const std::string& key = "k") {
  pb::RegisterRequest req;
  req.set_key(key);
  return s.register_worker(req).worker_id();
}

// Idle workers wait on their own key's queue, one woken per job (a Submit once woke every idle
// worker of the farm: bench/README.md "Farm scale"). What that must not lose: a job for key a
// reaches a's waiting worker at once, not at its deadline, and b's worker is not handed it.
TEST(SchedulerWakeUps, AJobWakesAWaitingWorkerOfItsKeyOnly) {
  SchedulerOptions o;
  o.heartbeat_timeout_s = 60;
  Scheduler s(o);
  const std::string a = register_worker(s, "a"), b = register_worker(s, "b");
  using std::chrono::seconds;
  const auto t0 = Scheduler::Clock::now();
  auto lease = [&](const std::string& worker, seconds wait) {
    return std::async(std::launch::async, [&s, worker, wait] {
      pb::Job job;
      const Scheduler::Wait got = s.lease(worker, Scheduler::Clock::now() + wait, &job);
      return std::make_pair(got, Scheduler::Clock::now());
    });
  };
  auto on_a = lease(a, seconds(20)), on_b = lease(b, seconds(2));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // both waiting
  ASSERT_TRUE(s.submit("c", "a", batch_of(1, 10)));
  const auto [got_a, at_a] = on_a.get();
  EXPECT_EQ(got_a, Scheduler::Wait::kGot);
  EXPECT_LT(at_a - t0, seconds(10)) << "a's worker was not woken by its job";
  const auto [got_b, at_b] = on_b.get();
  EXPECT_EQ(got_b, Scheduler::Wait::kNothing);
  EXPECT_GE(at_b - t0, seconds(2));
}

TEST(SchedulerMemory, HeldBytesFollowQueuedJobsAndFallToZeroWhenDone) {
  Scheduler s = small_scheduler(1 << 20);
  const uint64_t one = job_of(1000).ByteSizeLong();
  ASSERT_TRUE(s.submit("c", "k", batch_of(3, 1000)));
  EXPECT_EQ(s.held_bytes(), 3 * one);
  const std::string w = register_worker(s);
  run_one(s, w);
  EXPECT_EQ(s.held_bytes(), 2 * one);
  run_one(s, w);
  run_one(s, w);
  EXPECT_EQ(s.held_bytes(), 0u);
}

TEST(SchedulerMemory, ASubmitPastTheLimitIsRefusedUntilJobsFinish) {
  Scheduler s = small_scheduler(10000);
  // Taken although past the limit: nothing else is held, and refusing it would be for ever.
  ASSERT_TRUE(s.submit("a", "k", batch_of(3, 4000)));
  EXPECT_FALSE(s.submit("b", "k", batch_of(1, 100)));
  const std::string w = register_worker(s);
  run_one(s, w);
  run_one(s, w);
  EXPECT_TRUE(s.submit("b", "k", batch_of(1, 100)));
}

TEST(SchedulerMemory, CancelledAndLostJobsFreeTheirBytes) {
  Scheduler s = small_scheduler(1 << 20);
  const std::optional<uint64_t> batch = s.submit("c", "k", batch_of(4, 500));
  ASSERT_TRUE(batch);
  const std::string w = register_worker(s);
  pb::Job running;
  ASSERT_EQ(s.lease(w, Scheduler::Clock::now(), &running), Scheduler::Wait::kGot);
  // Three queued jobs and one running one (kept as a light tombstone for its worker).
  EXPECT_EQ(s.cancel(*batch), 4);
  EXPECT_EQ(s.held_bytes(), 0u);

  ASSERT_TRUE(s.submit("c", "k", batch_of(1, 500)));
  const std::string w2 = register_worker(s);
  ASSERT_EQ(s.lease(w2, Scheduler::Clock::now(), &running), Scheduler::Wait::kGot);
  // The worker goes silent three times over: the job fails as lost and frees its bytes.
  for (int attempt = 0; attempt < 3; ++attempt) {
    s.reap();
    if (attempt < 2) {
      const std::string again = register_worker(s);
      ASSERT_EQ(s.lease(again, Scheduler::Clock::now(), &running), Scheduler::Wait::kGot);
    }
  }
  EXPECT_EQ(s.held_bytes(), 0u);
}

TEST(SchedulerMemory, ABatchNobodyWatchesIsDroppedAWatchedOneIsKept) {
  SchedulerOptions o;
  o.unwatched_batch_timeout_s = 0;
  Scheduler s(o);
  const std::optional<uint64_t> lonely = s.submit("a", "k", batch_of(2, 100));
  const std::optional<uint64_t> watched = s.submit("b", "k", batch_of(2, 100));
  ASSERT_TRUE(lonely && watched);
  pb::Result r;
  EXPECT_EQ(s.next_result(*watched, 0, Scheduler::Clock::now(), &r), Scheduler::Wait::kNothing);
  EXPECT_EQ(s.drop_unwatched_batches(), std::vector<uint64_t>{*lonely});
  EXPECT_EQ(s.next_result(*lonely, 0, Scheduler::Clock::now(), &r), Scheduler::Wait::kUnknown);
  EXPECT_EQ(s.held_bytes(), 2 * job_of(100).ByteSizeLong());  // the watched batch's jobs
  EXPECT_TRUE(s.drop_unwatched_batches().empty());
}

}  // namespace
}  // namespace kiln::farm
