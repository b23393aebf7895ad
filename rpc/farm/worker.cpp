// The worker's loop: register, lease, run, report; heartbeats beside it.
#include "rpc/farm/worker.h"

#include <signal.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <thread>

#include "rpc/farm/data.h"
#include "rpc/farm/farm.grpc.pb.h"
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

class Worker {
 public:
  explicit Worker(const WorkerOptions& o)
      : o_(o), stub_(pb::Tracker::NewStub(make_channel(o.tracker, o.tls_ca))) {}

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
    for (int backoff_ms = 100; !g_stop;) {
      if (worker_id().empty()) {
        const grpc::Status s = register_once();
        if (s.error_code() == grpc::StatusCode::UNAUTHENTICATED) return rejected(s);
        if (!s.ok()) {
          log("cannot register with " + o_.tracker + ": " + s.error_message() + "; retrying");
          nap(backoff_ms);
          backoff_ms = std::min(backoff_ms * 2, 2000);
          continue;
        }
        backoff_ms = 100;
      }
      pb::LeaseRequest req;
      req.set_worker_id(worker_id());
      req.set_wait_ms(1000);
      pb::LeaseReply reply;
      grpc::ClientContext ctx;
      prepare_context(ctx, o_.token, 10);
      const grpc::Status s = stub_->Lease(&ctx, req, &reply);
      if (s.error_code() == grpc::StatusCode::UNAUTHENTICATED) return rejected(s);
      if (s.error_code() == grpc::StatusCode::NOT_FOUND) {
        forget_id();
        continue;
      }
      if (!s.ok()) {
        log("lease failed: " + s.error_message());
        nap(backoff_ms);
        continue;
      }
      if (reply.has_job()) run_job(reply.job());
    }
    return 0;
  }

  void run_job(const pb::Job& job) {
    cancel_ = false;
    current_job_ = job.job_id();
    pb::Result result = run_in_sandbox(job, o_.sandbox, cancel_);
    current_job_ = 0;
    result.set_worker_id(worker_id());
    pb::ReportRequest req;
    req.set_worker_id(worker_id());
    *req.mutable_result() = std::move(result);
    for (int attempt = 0; attempt < 5 && !g_stop; ++attempt) {
      pb::ReportReply reply;
      grpc::ClientContext ctx;
      prepare_context(ctx, o_.token, 10);
      const grpc::Status s = stub_->Report(&ctx, req, &reply);
      if (s.ok()) return;
      if (s.error_code() == grpc::StatusCode::NOT_FOUND) {  // the tracker re-queued it already
        forget_id();
        return;
      }
      log("report of job " + std::to_string(job.job_id()) + " failed: " + s.error_message());
      nap(200 << attempt);
    }
  }

  void heartbeat_loop() {
    std::unique_lock lock(mu_);
    while (!done_) {
      cv_.wait_for(lock, std::chrono::milliseconds(heartbeat_ms_));
      if (done_ || id_.empty()) continue;
      pb::HeartbeatRequest req;
      req.set_worker_id(id_);
      req.set_job_id(current_job_);
      lock.unlock();
      pb::HeartbeatReply reply;
      grpc::ClientContext ctx;
      prepare_context(ctx, o_.token, 5);
      const grpc::Status s = stub_->Heartbeat(&ctx, req, &reply);
      if (s.ok() && reply.cancel_job() && req.job_id() == current_job_) cancel_ = true;
      lock.lock();
    }
  }

  grpc::Status register_once() {
    pb::RegisterRequest req;
    req.set_key(o_.key);
    req.set_name(o_.name.empty() ? default_name() : o_.name);
    req.set_arch(machine_arch());
    pb::RegisterReply reply;
    grpc::ClientContext ctx;
    prepare_context(ctx, o_.token, 5);
    const grpc::Status s = stub_->Register(&ctx, req, &reply);
    if (s.ok()) {
      std::lock_guard lock(mu_);
      id_ = reply.worker_id();
      heartbeat_ms_ = std::max<uint32_t>(50, reply.heartbeat_ms());
      log("registered as " + id_ + " with " + o_.tracker);
    }
    return s;
  }

  int rejected(const grpc::Status& s) {
    std::fprintf(stderr, "kiln-worker: the tracker at %s rejected us: %s\n", o_.tracker.c_str(),
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
  static void nap(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }
  void log(const std::string& line) {
    std::fprintf(stderr, "kiln-worker[%s]: %s\n", o_.key.c_str(), line.c_str());
  }

  const WorkerOptions o_;
  std::unique_ptr<pb::Tracker::Stub> stub_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::string id_;
  uint32_t heartbeat_ms_ = 500;
  std::atomic<uint64_t> current_job_{0};
  std::atomic<bool> cancel_{false};
};

}  // namespace

int run_worker(const WorkerOptions& options) {
  if (options.tracker.empty()) throw std::runtime_error("no tracker address given (--tracker)");
  if (options.key.empty()) throw std::runtime_error("no device key given (--key)");
  if (options.token.empty()) throw std::runtime_error("no farm token");
  if (options.sandbox.helper.empty()) throw std::runtime_error("no sandbox helper found");
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  return Worker(options).run();
}

}  // namespace kiln::farm
