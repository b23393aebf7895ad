// Per-key round-robin queues, leases and heartbeats, batches of results.
#include "rpc/farm/scheduler.h"

#include <algorithm>

#include "rpc/farm/transport.h"

namespace kiln::farm {

Scheduler::Scheduler(SchedulerOptions options) : options_(options) {}

pb::RegisterReply Scheduler::register_worker(const pb::RegisterRequest& request) {
  std::lock_guard lock(mu_);
  Worker w;
  w.id = request.key() + "-" + std::to_string(next_worker_++);
  w.key = request.key();
  w.name = request.name();
  w.arch = request.arch();
  w.last_seen = Clock::now();
  workers_[w.id] = w;
  queues_[w.key];  // the key shows in status even before any job
  pb::RegisterReply reply;
  reply.set_worker_id(w.id);
  reply.set_heartbeat_ms(options_.heartbeat_ms);
  return reply;
}

void Scheduler::enqueue_locked(uint64_t job_id, bool front) {
  const JobState& s = jobs_.at(job_id);
  KeyQueue& q = queues_[s.key];
  auto& mine = q.per_client[s.client];
  if (mine.empty()) {
    if (front)
      q.turn.push_front(s.client);
    else
      q.turn.push_back(s.client);
  }
  if (front)
    mine.push_front(job_id);
  else
    mine.push_back(job_id);
  q.work.notify_one();
}

std::optional<uint64_t> Scheduler::dequeue_locked(const std::string& key) {
  auto qit = queues_.find(key);
  if (qit == queues_.end() || qit->second.turn.empty()) return std::nullopt;
  KeyQueue& q = qit->second;
  const std::string client = q.turn.front();
  q.turn.pop_front();
  auto& mine = q.per_client[client];
  const uint64_t id = mine.front();
  mine.pop_front();
  if (mine.empty())
    q.per_client.erase(client);
  else
    q.turn.push_back(client);  // its next job waits for every other client's turn
  return id;
}

Scheduler::Wait Scheduler::lease(const std::string& worker_id, Clock::time_point deadline,
                                 pb::Job* job) {
  std::unique_lock lock(mu_);
  std::condition_variable* waited = nullptr;  // the key's, once this call has waited
  bool last_look = false;
  for (;;) {
    auto wit = workers_.find(worker_id);
    if (wit == workers_.end()) {
      // Reaped while waiting: a wake-up it took goes on to another worker of its key.
      if (waited) waited->notify_one();
      return Wait::kUnknown;
    }
    Worker& w = wit->second;
    w.last_seen = Clock::now();
    if (w.job != 0) {
      // It asks for work while holding a job: the job's run was lost (e.g. the worker
      // restarted its loop). Put the job back rather than lose it.
      auto jit = jobs_.find(w.job);
      if (jit != jobs_.end() && jit->second.cancelled) {
        erase_job_locked(jit);
      } else if (jit != jobs_.end()) {
        jit->second.worker.clear();
        enqueue_locked(w.job, true);
      }
      w.job = 0;
    }
    if (shutdown_) return Wait::kNothing;
    if (auto id = dequeue_locked(w.key)) {
      JobState& s = jobs_.at(*id);
      s.worker = worker_id;
      ++s.attempts;
      w.job = *id;
      *job = s.job;
      return Wait::kGot;
    }
    // One wake-up per queued job (enqueue_locked), so a wait that times out takes a last
    // look at the queue: the job it was woken for may have come with the timeout.
    if (last_look) return Wait::kNothing;
    waited = &queues_[w.key].work;
    last_look = waited->wait_until(lock, deadline) == std::cv_status::timeout;
  }
}

bool Scheduler::heartbeat(const std::string& worker_id, uint64_t job_id, bool* cancel) {
  std::lock_guard lock(mu_);
  auto wit = workers_.find(worker_id);
  if (wit == workers_.end()) return false;
  wit->second.last_seen = Clock::now();
  *cancel = false;
  if (job_id != 0) {
    auto jit = jobs_.find(job_id);
    *cancel = jit == jobs_.end() || jit->second.cancelled || jit->second.worker != worker_id;
  }
  return true;
}

void Scheduler::finish_locked(JobState& state, pb::Result result) {
  auto bit = batches_.find(state.batch);
  if (bit != batches_.end() && !state.cancelled) {
    result.set_job_id(state.job.job_id());
    result.set_index(state.job.index());
    result.set_attempts(state.attempts);
    bit->second.results.push_back(std::move(result));
    result_cv_.notify_all();
  }
  erase_job_locked(jobs_.find(state.job.job_id()));
}

void Scheduler::erase_job_locked(std::map<uint64_t, JobState>::iterator it) {
  if (it == jobs_.end()) return;
  held_bytes_ -= it->second.bytes;
  jobs_.erase(it);
}

uint64_t Scheduler::held_bytes() const {
  std::lock_guard lock(mu_);
  return held_bytes_;
}

bool Scheduler::report(const std::string& worker_id, pb::Result result) {
  std::lock_guard lock(mu_);
  auto wit = workers_.find(worker_id);
  if (wit == workers_.end()) return false;
  Worker& w = wit->second;
  w.last_seen = Clock::now();
  if (w.job == 0 || w.job != result.job_id()) return true;  // stale: already re-queued
  w.job = 0;
  if (result.error() == pb::OK)
    ++w.completed;
  else if (result.error() == pb::TIMEOUT)
    ++w.timed_out;
  else
    ++w.failed;
  auto jit = jobs_.find(result.job_id());
  if (jit != jobs_.end()) finish_locked(jit->second, std::move(result));
  return true;
}

std::optional<uint64_t> Scheduler::submit(const std::string& client, const std::string& key,
                                          std::vector<pb::Job> jobs) {
  std::vector<uint64_t> sizes;
  uint64_t batch_bytes = 0;
  for (const pb::Job& j : jobs) batch_bytes += sizes.emplace_back(j.ByteSizeLong());
  std::lock_guard lock(mu_);
  if (held_bytes_ > 0 && held_bytes_ + batch_bytes > options_.max_held_bytes) return std::nullopt;
  held_bytes_ += batch_bytes;
  const uint64_t batch_id = next_batch_++;
  Batch& b = batches_[batch_id];
  b.submitted = Clock::now();
  b.client = client;
  b.key = key;
  b.total = jobs.size();
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const uint64_t id = next_job_++;
    JobState& s = jobs_[id];
    s.job = std::move(jobs[i]);
    s.job.set_job_id(id);
    s.job.set_index(static_cast<uint32_t>(i));
    s.batch = batch_id;
    s.client = client;
    s.key = key;
    s.bytes = sizes[i];
    enqueue_locked(id, false);
  }
  return batch_id;
}

Scheduler::Wait Scheduler::next_result(uint64_t batch_id, std::size_t next,
                                       Clock::time_point deadline, pb::Result* result) {
  std::unique_lock lock(mu_);
  for (;;) {
    auto bit = batches_.find(batch_id);
    if (bit == batches_.end()) return Wait::kUnknown;
    bit->second.watched = true;
    if (next < bit->second.results.size()) {
      *result = bit->second.results[next];
      return Wait::kGot;
    }
    if (next >= bit->second.total) return Wait::kDone;
    if (shutdown_) return Wait::kNothing;
    if (result_cv_.wait_until(lock, deadline) == std::cv_status::timeout) return Wait::kNothing;
  }
}

int Scheduler::cancel(uint64_t batch_id) {
  std::lock_guard lock(mu_);
  return cancel_locked(batch_id);
}

std::vector<uint64_t> Scheduler::drop_unwatched_batches() {
  std::lock_guard lock(mu_);
  const auto limit = std::chrono::duration<double>(options_.unwatched_batch_timeout_s);
  const auto now = Clock::now();
  std::vector<uint64_t> dropped;
  for (const auto& [id, b] : batches_)
    if (!b.watched && now - b.submitted >= limit) dropped.push_back(id);
  for (const uint64_t id : dropped) {
    cancel_locked(id);
    batches_.erase(id);
  }
  return dropped;
}

int Scheduler::cancel_locked(uint64_t batch_id) {
  auto bit = batches_.find(batch_id);
  if (bit == batches_.end()) return -1;
  std::vector<uint64_t> ids;
  for (const auto& [id, s] : jobs_)
    if (s.batch == batch_id && !s.cancelled) ids.push_back(id);
  for (const uint64_t id : ids) {
    JobState& s = jobs_.at(id);
    if (s.worker.empty()) {  // still queued: take it out of its queue
      KeyQueue& q = queues_[s.key];
      auto cit = q.per_client.find(s.client);
      if (cit != q.per_client.end()) {
        std::erase(cit->second, id);
        if (cit->second.empty()) {
          q.per_client.erase(cit);
          std::erase(q.turn, s.client);
        }
      }
    }
    pb::Result r;
    r.set_error(pb::CANCELLED);
    r.set_message("the batch was cancelled");
    const bool running = !s.worker.empty();
    JobState copy = s;
    finish_locked(copy, r);  // erases the job
    if (running) {
      // Keep a tombstone so the worker's heartbeat is told to stop, and its report dropped;
      // without the job's kernel and data, which count no more.
      copy.cancelled = true;
      copy.bytes = 0;
      copy.job.clear_so();
      copy.job.clear_args();
      copy.job.clear_check();
      jobs_[id] = std::move(copy);
    }
  }
  return static_cast<int>(ids.size());
}

void Scheduler::forget_batch(uint64_t batch_id) {
  std::lock_guard lock(mu_);
  batches_.erase(batch_id);
}

pb::StatusReply Scheduler::status() const {
  std::lock_guard lock(mu_);
  pb::StatusReply reply;
  std::map<std::string, pb::KeyStatus> keys;
  for (const auto& [key, q] : queues_) {
    pb::KeyStatus& k = keys[key];
    k.set_key(key);
    uint32_t queued = 0;
    for (const auto& [client, ids] : q.per_client) queued += static_cast<uint32_t>(ids.size());
    k.set_queued(queued);
    k.set_clients(static_cast<uint32_t>(q.per_client.size()));
  }
  const auto now = Clock::now();
  for (const auto& [id, w] : workers_) {
    pb::WorkerStatus* ws = reply.add_workers();
    ws->set_worker_id(w.id);
    ws->set_key(w.key);
    ws->set_name(w.name);
    ws->set_arch(w.arch);
    ws->set_busy_job(w.job);
    ws->set_completed(w.completed);
    ws->set_failed(w.failed);
    ws->set_timed_out(w.timed_out);
    ws->set_idle_s(std::chrono::duration<double>(now - w.last_seen).count());
    pb::KeyStatus& k = keys[w.key];
    k.set_key(w.key);
    k.set_workers(k.workers() + 1);
    if (w.job != 0) k.set_running(k.running() + 1);
  }
  for (auto& [key, k] : keys) *reply.add_keys() = k;
  return reply;
}

std::vector<std::string> Scheduler::reap() {
  std::lock_guard lock(mu_);
  const auto now = Clock::now();
  const auto limit = std::chrono::duration<double>(options_.heartbeat_timeout_s);
  std::vector<std::string> dropped;
  for (auto it = workers_.begin(); it != workers_.end();) {
    Worker& w = it->second;
    if (now - w.last_seen <= limit) {
      ++it;
      continue;
    }
    dropped.push_back(w.id);
    auto jit = w.job ? jobs_.find(w.job) : jobs_.end();
    if (jit != jobs_.end()) {
      JobState& s = jit->second;
      s.worker.clear();
      if (s.cancelled) {
        erase_job_locked(jit);
      } else if (s.attempts >= options_.max_attempts) {
        pb::Result r;
        r.set_error(pb::WORKER_LOST);
        r.set_message("lost with " + std::to_string(s.attempts) + " worker(s); last: " + w.id);
        r.set_worker_id(w.id);
        finish_locked(s, r);
      } else {
        enqueue_locked(w.job, true);
      }
    }
    it = workers_.erase(it);
  }
  return dropped;
}

void Scheduler::shutdown() {
  std::lock_guard lock(mu_);
  shutdown_ = true;
  for (auto& [key, q] : queues_) q.work.notify_all();
  result_cv_.notify_all();
}

}  // namespace kiln::farm
