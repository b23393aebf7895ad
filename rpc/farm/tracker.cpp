// The tracker's gRPC service: token check, validation, then the Scheduler.
#include "rpc/farm/tracker.h"

#include <signal.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "rpc/farm/farm.grpc.pb.h"
#include "rpc/farm/transport.h"
#include "rpc/farm/validate.h"

namespace kiln::farm {
namespace {

using grpc::ServerContext;
using grpc::StatusCode;
using Clock = Scheduler::Clock;

Clock::time_point after_ms(uint32_t ms) {
  return Clock::now() + std::chrono::milliseconds(ms);
}

class TrackerService final : public pb::Tracker::Service {
 public:
  TrackerService(Scheduler& scheduler, std::string token)
      : scheduler_(scheduler), token_(std::move(token)) {}

  grpc::Status Register(ServerContext* ctx, const pb::RegisterRequest* req,
                        pb::RegisterReply* reply) override {
    if (grpc::Status s = check_token(*ctx, token_, "Register"); !s.ok()) return s;
    if (req->key().empty() || req->key().size() > 128) {
      return {StatusCode::INVALID_ARGUMENT, "key: must be 1 to 128 characters"};
    }
    *reply = scheduler_.register_worker(*req);
    std::fprintf(stderr, "kiln tracker: worker %s (%s, %s) joined from %s\n",
                 reply->worker_id().c_str(), req->name().c_str(), req->arch().c_str(),
                 ctx->peer().c_str());
    return grpc::Status::OK;
  }

  grpc::Status Lease(ServerContext* ctx, const pb::LeaseRequest* req,
                     pb::LeaseReply* reply) override {
    if (grpc::Status s = check_token(*ctx, token_, "Lease"); !s.ok()) return s;
    const uint32_t wait_ms = std::min<uint32_t>(req->wait_ms(), 5000);
    switch (scheduler_.lease(req->worker_id(), after_ms(wait_ms), reply->mutable_job())) {
      case Scheduler::Wait::kGot:
        return grpc::Status::OK;
      case Scheduler::Wait::kUnknown:
        return unknown_worker(req->worker_id());
      default:
        reply->clear_job();
        return grpc::Status::OK;
    }
  }

  grpc::Status Heartbeat(ServerContext* ctx, const pb::HeartbeatRequest* req,
                         pb::HeartbeatReply* reply) override {
    if (grpc::Status s = check_token(*ctx, token_, "Heartbeat"); !s.ok()) return s;
    bool cancel = false;
    if (!scheduler_.heartbeat(req->worker_id(), req->job_id(), &cancel)) {
      return unknown_worker(req->worker_id());
    }
    reply->set_cancel_job(cancel);
    return grpc::Status::OK;
  }

  grpc::Status Report(ServerContext* ctx, const pb::ReportRequest* req, pb::ReportReply*) override {
    if (grpc::Status s = check_token(*ctx, token_, "Report"); !s.ok()) return s;
    if (!scheduler_.report(req->worker_id(), req->result())) {
      return unknown_worker(req->worker_id());
    }
    return grpc::Status::OK;
  }

  grpc::Status Submit(ServerContext* ctx, const pb::SubmitRequest* req,
                      pb::SubmitReply* reply) override {
    if (grpc::Status s = check_token(*ctx, token_, "Submit"); !s.ok()) return s;
    if (req->key().empty()) return {StatusCode::INVALID_ARGUMENT, "key: no device key given"};
    if (req->jobs_size() == 0 || req->jobs_size() > kMaxJobsPerBatch) {
      return {StatusCode::INVALID_ARGUMENT,
              "jobs: a batch holds 1 to " + std::to_string(kMaxJobsPerBatch) + " jobs"};
    }
    for (int i = 0; i < req->jobs_size(); ++i) {
      const std::string why = validate_job(req->jobs(i));
      if (!why.empty()) {
        return {StatusCode::INVALID_ARGUMENT, "jobs[" + std::to_string(i) + "]: " + why};
      }
    }
    std::vector<pb::Job> jobs(req->jobs().begin(), req->jobs().end());
    const std::string client = req->client().empty() ? ctx->peer() : req->client();
    reply->set_batch_id(scheduler_.submit(client, req->key(), std::move(jobs)));
    return grpc::Status::OK;
  }

  grpc::Status Watch(ServerContext* ctx, const pb::WatchRequest* req,
                     grpc::ServerWriter<pb::Result>* writer) override {
    if (grpc::Status s = check_token(*ctx, token_, "Watch"); !s.ok()) return s;
    pb::Result result;
    for (std::size_t next = 0;;) {
      switch (scheduler_.next_result(req->batch_id(), next, after_ms(200), &result)) {
        case Scheduler::Wait::kGot:
          if (!writer->Write(result)) return client_gone(req->batch_id());
          ++next;
          break;
        case Scheduler::Wait::kDone:
          scheduler_.forget_batch(req->batch_id());
          return grpc::Status::OK;
        case Scheduler::Wait::kUnknown:
          return {StatusCode::NOT_FOUND, "no batch " + std::to_string(req->batch_id())};
        case Scheduler::Wait::kNothing:
          if (ctx->IsCancelled()) return client_gone(req->batch_id());
          break;
      }
    }
  }

  grpc::Status Cancel(ServerContext* ctx, const pb::CancelRequest* req,
                      pb::CancelReply* reply) override {
    if (grpc::Status s = check_token(*ctx, token_, "Cancel"); !s.ok()) return s;
    const int n = scheduler_.cancel(req->batch_id());
    if (n < 0) return {StatusCode::NOT_FOUND, "no batch " + std::to_string(req->batch_id())};
    reply->set_cancelled(static_cast<uint32_t>(n));
    return grpc::Status::OK;
  }

  grpc::Status Status(ServerContext* ctx, const pb::StatusRequest*,
                      pb::StatusReply* reply) override {
    if (grpc::Status s = check_token(*ctx, token_, "Status"); !s.ok()) return s;
    *reply = scheduler_.status();
    return grpc::Status::OK;
  }

 private:
  static grpc::Status unknown_worker(const std::string& id) {
    return {StatusCode::NOT_FOUND, "unknown worker '" + id + "': register again"};
  }
  // The client went away while watching: its unfinished jobs would run for nobody.
  grpc::Status client_gone(uint64_t batch_id) {
    const int n = scheduler_.cancel(batch_id);
    scheduler_.forget_batch(batch_id);
    std::fprintf(stderr, "kiln tracker: client of batch %llu went away; %d job(s) cancelled\n",
                 static_cast<unsigned long long>(batch_id), n);
    return {StatusCode::CANCELLED, "client went away"};
  }

  Scheduler& scheduler_;
  const std::string token_;
};

std::string read_pem(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read '" + path + "'");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

int run_tracker(const TrackerOptions& options) {
  if (options.token.empty()) throw std::runtime_error("the tracker needs a farm token");
  if (options.tls_cert.empty() != options.tls_key.empty()) {
    throw std::runtime_error("TLS needs both --tls-cert and --tls-key");
  }
  // Signals are taken synchronously below; block them before gRPC starts its threads.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  Scheduler scheduler(options.scheduler);
  TrackerService service(scheduler, options.token);
  std::shared_ptr<grpc::ServerCredentials> creds = grpc::InsecureServerCredentials();
  if (!options.tls_cert.empty()) {
    grpc::SslServerCredentialsOptions ssl;
    ssl.pem_key_cert_pairs.push_back({read_pem(options.tls_key), read_pem(options.tls_cert)});
    creds = grpc::SslServerCredentials(ssl);
  }
  grpc::ServerBuilder builder;
  int port = 0;
  const std::string address = options.bind + ":" + std::to_string(options.port);
  builder.AddListeningPort(address, creds, &port);
  builder.SetMaxReceiveMessageSize(kMaxMessageBytes);
  builder.SetMaxSendMessageSize(kMaxMessageBytes);
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server || port == 0) throw std::runtime_error("cannot listen on " + address);
  std::printf("kiln tracker: listening on %s:%d\n", options.bind.c_str(), port);
  std::fflush(stdout);

  // This thread reaps silent workers until a signal asks it to stop.
  const timespec tick{0, 200 * 1000 * 1000};
  for (;;) {
    const int sig = sigtimedwait(&signals, nullptr, &tick);
    if (sig == SIGINT || sig == SIGTERM) break;
    for (const std::string& id : scheduler.reap()) {
      std::fprintf(stderr, "kiln tracker: worker %s went silent; its job (if any) re-queued\n",
                   id.c_str());
    }
  }
  std::fprintf(stderr, "kiln tracker: shutting down\n");
  scheduler.shutdown();
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  return 0;
}

}  // namespace kiln::farm
