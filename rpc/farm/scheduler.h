// The tracker's state, with no gRPC in it: workers grouped by device key, one queue per key
// shared round-robin between clients, leases kept alive by heartbeats, and batches whose
// results wait for their client. The gRPC service (tracker.cpp) is a thin layer over this.
//
// A worker that stays silent for longer than the heartbeat timeout is dropped, and the job it
// held goes back to the front of its queue for another worker of the same key (up to
// max_attempts workers, then it fails as WORKER_LOST). Thread-safe: every method locks.
#ifndef KILN_RPC_FARM_SCHEDULER_H
#define KILN_RPC_FARM_SCHEDULER_H

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "rpc/farm/farm.pb.h"

namespace kiln::farm {

struct SchedulerOptions {
  double heartbeat_timeout_s = 5;  // silence after which a worker counts as gone
  uint32_t heartbeat_ms = 500;     // how often workers are told to send heartbeats
  uint32_t max_attempts = 3;       // workers a job may be lost by before it fails
  // Bytes of jobs (kernels and inputs, as sent) held queued or running across all clients:
  // a Submit that would pass it is refused until some finish, so no client can grow the
  // tracker's memory without bound. A batch is always taken when nothing is held.
  uint64_t max_held_bytes = 2ULL << 30;
  // A batch nobody has watched this long after its Submit (its client died before watching,
  // or lost the Submit's reply and submitted again) is cancelled and forgotten, so that its
  // results do not stay in memory for ever.
  double unwatched_batch_timeout_s = 600;
};

class Scheduler {
 public:
  using Clock = std::chrono::steady_clock;
  enum class Wait { kGot, kNothing, kDone, kUnknown };

  explicit Scheduler(SchedulerOptions options);

  // Workers.
  pb::RegisterReply register_worker(const pb::RegisterRequest& request);
  // Waits until `deadline` for a job of the worker's key: kGot (job set), kNothing, or
  // kUnknown when the worker is not (or no longer) registered.
  Wait lease(const std::string& worker_id, Clock::time_point deadline, pb::Job* job);
  // False when the worker is unknown. Sets *cancel when its current job was cancelled.
  bool heartbeat(const std::string& worker_id, uint64_t job_id, bool* cancel);
  // False when the worker is unknown; a result for a job the worker no longer holds is dropped.
  bool report(const std::string& worker_id, pb::Result result);

  // Clients. `jobs` must already be validated. The batch id, or nullopt (nothing queued) when
  // the batch would take the jobs held past max_held_bytes.
  std::optional<uint64_t> submit(const std::string& client, const std::string& key,
                                 std::vector<pb::Job> jobs);
  // Bytes of jobs held now, and the most it takes (SchedulerOptions::max_held_bytes).
  uint64_t held_bytes() const;
  uint64_t max_held_bytes() const { return options_.max_held_bytes; }
  // Waits until `deadline` for result number `next` of the batch: kGot (result set), kNothing
  // (deadline passed), kDone (all results delivered) or kUnknown.
  Wait next_result(uint64_t batch_id, std::size_t next, Clock::time_point deadline,
                   pb::Result* result);
  // Every unfinished job of the batch ends as CANCELLED; returns how many. -1: unknown batch.
  int cancel(uint64_t batch_id);
  void forget_batch(uint64_t batch_id);
  // Cancels and forgets the batches nobody has watched within unwatched_batch_timeout_s of
  // their Submit; returns their ids.
  std::vector<uint64_t> drop_unwatched_batches();

  pb::StatusReply status() const;
  // Drops workers silent for longer than the heartbeat timeout, re-queueing their jobs.
  // Returns the ids of the dropped workers.
  std::vector<std::string> reap();
  // Wakes every waiter; later waits return at once.
  void shutdown();

 private:
  struct JobState {
    pb::Job job;
    uint64_t batch = 0;
    std::string client, key, worker;  // worker: "" while queued
    uint32_t attempts = 0;
    bool cancelled = false;
    uint64_t bytes = 0;  // counted in held_bytes_
  };
  struct Batch {
    std::string client, key;
    std::size_t total = 0;
    std::vector<pb::Result> results;
    Clock::time_point submitted;
    bool watched = false;  // a client has asked for its results
  };
  struct KeyQueue {
    std::map<std::string, std::deque<uint64_t>> per_client;
    std::deque<std::string> turn;  // clients with queued jobs, in round-robin order
    // The key's idle workers wait here, one woken per job queued: waking every idle worker
    // of the farm per Submit cost the tracker ~12-15 us of CPU per idle worker, all of it
    // through mu_ (tests/farm/farm_scale_test.cpp, bench/README.md "Farm scale").
    std::condition_variable work;
  };
  struct Worker {
    std::string id, key, name, arch;
    Clock::time_point last_seen;
    uint64_t job = 0;
    uint64_t completed = 0, failed = 0, timed_out = 0;
  };

  void enqueue_locked(uint64_t job_id, bool front);
  std::optional<uint64_t> dequeue_locked(const std::string& key);
  void finish_locked(JobState& state, pb::Result result);
  int cancel_locked(uint64_t batch_id);
  void erase_job_locked(std::map<uint64_t, JobState>::iterator it);

  const SchedulerOptions options_;
  mutable std::mutex mu_;
  std::condition_variable result_cv_;
  bool shutdown_ = false;
  uint64_t next_job_ = 1, next_batch_ = 1, next_worker_ = 1;
  uint64_t held_bytes_ = 0;
  std::map<uint64_t, JobState> jobs_;  // queued or running
  std::map<uint64_t, Batch> batches_;
  std::map<std::string, KeyQueue> queues_;
  std::map<std::string, Worker> workers_;
};

}  // namespace kiln::farm

#endif  // KILN_RPC_FARM_SCHEDULER_H
