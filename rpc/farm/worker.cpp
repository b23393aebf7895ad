// The worker's loop: register, lease, run, report; heartbeats beside it. The loop talks to a
// Link: a remote tracker over gRPC (farm mode) or a Scheduler in this process (direct mode).
#include "rpc/farm/worker.h"

#include <signal.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "rpc/farm/parent_watch.h"
#include "rpc/farm/backoff.h"
#include "rpc/farm/data.h"
#include "rpc/farm/farm.grpc.pb.h"
#include "rpc/farm/scheduler.h"
#include "rpc/farm/service.h"
#include "rpc/farm/transport.h"

namespace kiln::farm {
namespace {

std::atomic<bool> g_stop{false};

extern "C" void on_stop_signal(int) {
  g_stop = true;
}

std::string machine_arch() {
  utsname u{};
  return uname(&u) == 0 ? u.machine : "unknown";
}

std::string default_name() {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  return std::string(host) + ":" + std::to_string(getpid());
}

// Where the worker gets its jobs from; the calls and status codes of farm.proto's worker half.
class Link {
 public:
  virtual ~Link() = default;
  virtual grpc::Status register_worker(const pb::RegisterRequest& req,
                                       pb::RegisterReply* reply) = 0;
  virtual grpc::Status lease(const pb::LeaseRequest& req, pb::LeaseReply* reply) = 0;
  virtual grpc::Status heartbeat(const pb::HeartbeatRequest& req, pb::HeartbeatReply* reply) = 0;
  virtual grpc::Status report(const pb::ReportRequest& req) = 0;
  virtual std::string where() const = 0;
};

class RemoteLink final : public Link {
 public:
  explicit RemoteLink(const WorkerOptions& o)
      : address_(o.tracker),
        token_(o.token),
        stub_(pb::Tracker::NewStub(make_channel(o.tracker, o.tls_ca))) {}
  grpc::Status register_worker(const pb::RegisterRequest& req, pb::RegisterReply* reply) override {
    grpc::ClientContext ctx;
    prepare_context(ctx, token_, 5);
    return stub_->Register(&ctx, req, reply);
  }
  grpc::Status lease(const pb::LeaseRequest& req, pb::LeaseReply* reply) override {
    grpc::ClientContext ctx;
    prepare_context(ctx, token_, 10);
    return stub_->Lease(&ctx, req, reply);
  }
  grpc::Status heartbeat(const pb::HeartbeatRequest& req, pb::HeartbeatReply* reply) override {
    grpc::ClientContext ctx;
    prepare_context(ctx, token_, 5);
    return stub_->Heartbeat(&ctx, req, reply);
  }
  grpc::Status report(const pb::ReportRequest& req) override {
    pb::ReportReply reply;
    grpc::ClientContext ctx;
    prepare_context(ctx, token_, 10);
    return stub_->Report(&ctx, req, &reply);
  }
  std::string where() const override { return address_; }

 private:
  const std::string address_, token_;
  std::unique_ptr<pb::Tracker::Stub> stub_;
};

// Direct mode: the scheduler that the worker's own service fills.
class LocalLink final : public Link {
 public:
  explicit LocalLink(Scheduler& scheduler) : scheduler_(scheduler) {}
  grpc::Status register_worker(const pb::RegisterRequest& req, pb::RegisterReply* reply) override {
    *reply = scheduler_.register_worker(req);
    return grpc::Status::OK;
  }
  grpc::Status lease(const pb::LeaseRequest& req, pb::LeaseReply* reply) override {
    const auto deadline = Scheduler::Clock::now() + std::chrono::milliseconds(req.wait_ms());
    switch (scheduler_.lease(req.worker_id(), deadline, reply->mutable_job())) {
      case Scheduler::Wait::kGot:
        return grpc::Status::OK;
      case Scheduler::Wait::kUnknown:
        return unknown();
      default:
        reply->clear_job();
        return grpc::Status::OK;
    }
  }
  grpc::Status heartbeat(const pb::HeartbeatRequest& req, pb::HeartbeatReply* reply) override {
    bool cancel = false;
    if (!scheduler_.heartbeat(req.worker_id(), req.job_id(), &cancel)) return unknown();
    reply->set_cancel_job(cancel);
    return grpc::Status::OK;
  }
  grpc::Status report(const pb::ReportRequest& req) override {
    return scheduler_.report(req.worker_id(), req.result()) ? grpc::Status::OK : unknown();
  }
  std::string where() const override { return "this process"; }

 private:
  static grpc::Status unknown() { return {grpc::StatusCode::NOT_FOUND, "unknown worker"}; }
  Scheduler& scheduler_;
};

class Worker {
 public:
  Worker(const WorkerOptions& o, Link& link) : o_(o), link_(link) {}

  int run() {
    std::thread beat([this] { heartbeat_loop(); });
    const int rc = serve();
    {
      std::lock_guard lock(mu_);
      done_ = true;
    }
    cv_.notify_all();
    beat.join();
    return rc;
  }

 private:
  // Returns 2 when the token is rejected, 0 when stopped.
  int serve() {
    Backoff backoff;
    // One log line when the tracker becomes unreachable and one when it is back, not one
    // per attempt: a worker may wait out a tracker restart for minutes.
    bool unreachable = false;
    auto failed = [&](const std::string& what, const grpc::Status& s) {
      if (!unreachable)
        log(what + " " + link_.where() + ": " + s.error_message() + "; retrying with backoff");
      unreachable = true;
      backoff.wait();
    };
    auto reached = [&] {
      if (unreachable) log("reached " + link_.where() + " again");
      unreachable = false;
      backoff.reset();
    };
    while (!g_stop) {
      if (worker_id().empty()) {
        const grpc::Status s = register_once();
        if (s.error_code() == grpc::StatusCode::UNAUTHENTICATED) return rejected(s);
        if (!s.ok()) {
          failed("cannot register with", s);
          continue;
        }
        reached();
      }
      pb::LeaseRequest req;
      req.set_worker_id(worker_id());
      req.set_wait_ms(1000);
      pb::LeaseReply reply;
      const grpc::Status s = link_.lease(req, &reply);
      if (s.error_code() == grpc::StatusCode::UNAUTHENTICATED) return rejected(s);
      if (s.error_code() == grpc::StatusCode::NOT_FOUND) {
        forget_id();
        continue;
      }
      if (!s.ok()) {
        failed("cannot lease a job from", s);
        continue;
      }
      reached();
      if (reply.has_job()) run_job(reply.job());
    }
    return 0;
  }

  void run_job(const pb::Job& job) {
    cancel_ = false;
    current_job_ = job.job_id();
    pb::Result result = o_.run_job ? o_.run_job(job, cancel_) : run_in_sandbox(job, o_.sandbox, cancel_);
    current_job_ = 0;
    result.set_worker_id(worker_id());
    pb::ReportRequest req;
    req.set_worker_id(worker_id());
    *req.mutable_result() = std::move(result);
    Backoff backoff(200, 3000);
    for (int attempt = 0; attempt < 5 && !g_stop; ++attempt) {
      const grpc::Status s = link_.report(req);
      if (s.ok()) return;
      if (s.error_code() == grpc::StatusCode::NOT_FOUND) {  // the tracker re-queued it already
        forget_id();
        return;
      }
      if (attempt == 0)
        log("report of job " + std::to_string(job.job_id()) + " failed: " + s.error_message() +
            "; retrying with backoff");
      backoff.wait();
    }
    // The tracker re-queues a job whose worker stays silent, so a dropped report loses time,
    // not the job.
    if (!g_stop) log("gave up reporting job " + std::to_string(job.job_id()));
  }

  // Beats every heartbeat_ms while a job runs and the tracker answers; while it does not, the
  // pause grows with jittered backoff (the lease loop logs the outage, so nothing is logged
  // here). An idle worker does not beat: its long-polled lease, renewed every second, tells
  // the tracker it is alive (two of every three idle RPCs were heartbeats, bench/README.md
  // "Farm scale").
  void heartbeat_loop() {
    std::unique_lock lock(mu_);
    Backoff backoff(static_cast<int>(heartbeat_ms_), 3000);
    int pause_ms = static_cast<int>(heartbeat_ms_);
    while (!done_) {
      cv_.wait_for(lock, std::chrono::milliseconds(pause_ms));
      pause_ms = static_cast<int>(heartbeat_ms_);
      if (done_ || id_.empty() || current_job_ == 0) continue;
      pb::HeartbeatRequest req;
      req.set_worker_id(id_);
      req.set_job_id(current_job_);
      lock.unlock();
      pb::HeartbeatReply reply;
      const grpc::Status s = link_.heartbeat(req, &reply);
      if (s.ok() && reply.cancel_job() && req.job_id() == current_job_) cancel_ = true;
      if (s.ok() || s.error_code() == grpc::StatusCode::NOT_FOUND)
        backoff.reset();
      else
        pause_ms = backoff.next_ms();
      lock.lock();
    }
  }

  grpc::Status register_once() {
    pb::RegisterRequest req;
    req.set_key(o_.key);
    req.set_name(o_.name.empty() ? default_name() : o_.name);
    req.set_arch(machine_arch());
    pb::RegisterReply reply;
    const grpc::Status s = link_.register_worker(req, &reply);
    if (s.ok()) {
      std::lock_guard lock(mu_);
      id_ = reply.worker_id();
      heartbeat_ms_ = std::max<uint32_t>(50, reply.heartbeat_ms());
      log("registered as " + id_ + " with " + link_.where());
    }
    return s;
  }

  int rejected(const grpc::Status& s) {
    std::fprintf(stderr, "kiln-worker: the tracker at %s rejected us: %s\n", link_.where().c_str(),
                 s.error_message().c_str());
    return 2;
  }
  std::string worker_id() {
    std::lock_guard lock(mu_);
    return id_;
  }
  void forget_id() {
    std::lock_guard lock(mu_);
    id_.clear();
  }
  void log(const std::string& line) {
    std::fprintf(stderr, "kiln-worker[%s]: %s\n", o_.key.c_str(), line.c_str());
  }

  const WorkerOptions o_;
  Link& link_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::string id_;
  uint32_t heartbeat_ms_ = 500;
  std::atomic<uint64_t> current_job_{0};
  std::atomic<bool> cancel_{false};
};

int run_direct(WorkerOptions options) {
  const auto [host, port] = parse_listen_address(options.listen);
  ServiceOptions so;
  so.token = options.token;
  so.direct = true;
  so.accept_any_key = options.key.empty();
  if (options.key.empty()) options.key = "direct";
  so.key = options.key;
  // Nobody reaps in direct mode: the one worker lives in this process.
  Scheduler scheduler(SchedulerOptions{});
  const auto service = make_farm_service(scheduler, so);
  int bound = 0;
  const auto server =
      start_farm_server(service.get(), host, port, options.tls_cert, options.tls_key, &bound);
  std::printf("kiln-worker: listening on %s:%d (direct mode, key %s)\n", host.c_str(), bound,
              so.accept_any_key ? "any" : so.key.c_str());
  std::fflush(stdout);
  LocalLink link(scheduler);
  const int rc = Worker(options, link).run();
  std::fprintf(stderr, "kiln-worker: shutting down\n");
  scheduler.shutdown();
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  return rc;
}

}  // namespace

std::pair<std::string, int> parse_listen_address(const std::string& value) {
  const auto colon = value.rfind(':');
  std::string host = colon == std::string::npos ? "127.0.0.1" : value.substr(0, colon);
  const std::string port = colon == std::string::npos ? value : value.substr(colon + 1);
  if (host.empty()) host = "127.0.0.1";
  const bool digits = !port.empty() && port.size() <= 5 &&
                      port.find_first_not_of("0123456789") == std::string::npos;
  if (!digits || std::stoi(port) > 65535) {
    throw std::runtime_error("--listen '" + value + "': expected [HOST:]PORT, PORT 0 to 65535");
  }
  return {host, std::stoi(port)};
}

int run_worker(const WorkerOptions& options) {
  exit_with_parent_if_asked();
  const bool direct = !options.listen.empty();
  if (direct == !options.tracker.empty()) {
    throw std::runtime_error(
        "give either --tracker HOST:PORT (join a farm) or --listen [HOST:]PORT (direct mode)");
  }
  if (!direct && options.key.empty()) throw std::runtime_error("no device key given (--key)");
  if (options.token.empty()) throw std::runtime_error("no farm token");
  if (options.sandbox.helper.empty()) throw std::runtime_error("no sandbox helper found");
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  if (direct) return run_direct(options);
  RemoteLink link(options);
  return Worker(options, link).run();
}

}  // namespace kiln::farm
