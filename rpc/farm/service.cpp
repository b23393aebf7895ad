// The farm's gRPC service: token check, validation, then the Scheduler.
#include "rpc/farm/service.h"

#include <cstdio>
#include <stdexcept>

#include "rpc/farm/transport.h"
#include "rpc/farm/validate.h"
#include "runtime/process/file_bytes.h"

namespace kiln::farm {
namespace {

using grpc::ServerContext;
using grpc::StatusCode;
using Clock = Scheduler::Clock;

Clock::time_point after_ms(uint32_t ms) {
  return Clock::now() + std::chrono::milliseconds(ms);
}

class FarmService final : public pb::Tracker::Service {
 public:
  FarmService(Scheduler& scheduler, ServiceOptions options)
      : scheduler_(scheduler), o_(std::move(options)) {}

  grpc::Status Register(ServerContext* ctx, const pb::RegisterRequest* req,
                        pb::RegisterReply* reply) override {
    if (grpc::Status s = check(*ctx, "Register"); !s.ok()) return s;
    if (o_.direct) return not_a_tracker();
    if (req->key().empty() || req->key().size() > kMaxKeyChars) {
      return {StatusCode::INVALID_ARGUMENT,
              "key: must be 1 to " + std::to_string(kMaxKeyChars) + " characters"};
    }
    *reply = scheduler_.register_worker(*req);
    std::fprintf(stderr, "kiln tracker: worker %s (%s, %s) joined from %s\n",
                 reply->worker_id().c_str(), req->name().c_str(), req->arch().c_str(),
                 ctx->peer().c_str());
    return grpc::Status::OK;
  }

  grpc::Status Lease(ServerContext* ctx, const pb::LeaseRequest* req,
                     pb::LeaseReply* reply) override {
    if (grpc::Status s = check(*ctx, "Lease"); !s.ok()) return s;
    if (o_.direct) return not_a_tracker();
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
    if (grpc::Status s = check(*ctx, "Heartbeat"); !s.ok()) return s;
    if (o_.direct) return not_a_tracker();
    bool cancel = false;
    if (!scheduler_.heartbeat(req->worker_id(), req->job_id(), &cancel)) {
      return unknown_worker(req->worker_id());
    }
    reply->set_cancel_job(cancel);
    return grpc::Status::OK;
  }

  grpc::Status Report(ServerContext* ctx, const pb::ReportRequest* req, pb::ReportReply*) override {
    if (grpc::Status s = check(*ctx, "Report"); !s.ok()) return s;
    if (o_.direct) return not_a_tracker();
    if (!scheduler_.report(req->worker_id(), req->result())) {
      return unknown_worker(req->worker_id());
    }
    return grpc::Status::OK;
  }

  grpc::Status Submit(ServerContext* ctx, const pb::SubmitRequest* req,
                      pb::SubmitReply* reply) override {
    if (grpc::Status s = check(*ctx, "Submit"); !s.ok()) return s;
    if (const std::string why = validate_submit(*req); !why.empty()) {
      return {StatusCode::INVALID_ARGUMENT, why};
    }
    std::string key = req->key();
    if (o_.direct) {
      if (!o_.accept_any_key && key != o_.key) {
        return {StatusCode::INVALID_ARGUMENT,
                "key: this is a direct worker for key '" + o_.key + "', not '" + key + "'"};
      }
      key = o_.key;
    }
    std::vector<pb::Job> jobs(req->jobs().begin(), req->jobs().end());
    const std::string client = req->client().empty() ? ctx->peer() : req->client();
    const std::optional<uint64_t> batch = scheduler_.submit(client, key, std::move(jobs));
    // UNAVAILABLE, as for a tracker that cannot be reached: nothing was queued, and the
    // client library retries it with backoff until jobs finish and make room.
    if (!batch) {
      return {StatusCode::UNAVAILABLE,
              "the farm is full (" + std::to_string(scheduler_.held_bytes() >> 20) +
                  " MiB of jobs held, at most " +
                  std::to_string(scheduler_.max_held_bytes() >> 20) +
                  " MiB): this batch must wait until some finish"};
    }
    reply->set_batch_id(*batch);
    return grpc::Status::OK;
  }

  grpc::Status Watch(ServerContext* ctx, const pb::WatchRequest* req,
                     grpc::ServerWriter<pb::Result>* writer) override {
    if (grpc::Status s = check(*ctx, "Watch"); !s.ok()) return s;
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
    if (grpc::Status s = check(*ctx, "Cancel"); !s.ok()) return s;
    const int n = scheduler_.cancel(req->batch_id());
    if (n < 0) return {StatusCode::NOT_FOUND, "no batch " + std::to_string(req->batch_id())};
    reply->set_cancelled(static_cast<uint32_t>(n));
    return grpc::Status::OK;
  }

  grpc::Status Status(ServerContext* ctx, const pb::StatusRequest*,
                      pb::StatusReply* reply) override {
    if (grpc::Status s = check(*ctx, "Status"); !s.ok()) return s;
    *reply = scheduler_.status();
    reply->set_direct(o_.direct);
    return grpc::Status::OK;
  }

 private:
  grpc::Status check(const ServerContext& ctx, const char* method) const {
    return check_token(ctx, o_.token, method, o_.direct ? "kiln-worker" : "kiln tracker");
  }
  static grpc::Status not_a_tracker() {
    return {StatusCode::UNIMPLEMENTED,
            "this is a direct worker (kiln-worker --listen), not a tracker: workers cannot join"};
  }
  static grpc::Status unknown_worker(const std::string& id) {
    return {StatusCode::NOT_FOUND, "unknown worker '" + id + "': register again"};
  }
  // The client went away while watching: its unfinished jobs would run for nobody.
  grpc::Status client_gone(uint64_t batch_id) {
    const int n = scheduler_.cancel(batch_id);
    scheduler_.forget_batch(batch_id);
    std::fprintf(stderr, "%s: client of batch %llu went away; %d job(s) cancelled\n",
                 o_.direct ? "kiln-worker" : "kiln tracker",
                 static_cast<unsigned long long>(batch_id), n);
    return {StatusCode::CANCELLED, "client went away"};
  }

  Scheduler& scheduler_;
  const ServiceOptions o_;
};

}  // namespace

std::unique_ptr<pb::Tracker::Service> make_farm_service(Scheduler& scheduler,
                                                        ServiceOptions options) {
  return std::make_unique<FarmService>(scheduler, std::move(options));
}

std::unique_ptr<grpc::Server> start_farm_server(grpc::Service* service, const std::string& bind,
                                                int port, const std::string& tls_cert,
                                                const std::string& tls_key, int* bound_port) {
  if (tls_cert.empty() != tls_key.empty()) {
    throw std::runtime_error("TLS needs both --tls-cert and --tls-key");
  }
  std::shared_ptr<grpc::ServerCredentials> creds = grpc::InsecureServerCredentials();
  if (!tls_cert.empty()) {
    grpc::SslServerCredentialsOptions ssl;
    ssl.pem_key_cert_pairs.push_back({read_file_bytes(tls_key), read_file_bytes(tls_cert)});
    creds = grpc::SslServerCredentials(ssl);
  }
  grpc::ServerBuilder builder;
  *bound_port = 0;
  const std::string address = bind + ":" + std::to_string(port);
  builder.AddListeningPort(address, creds, bound_port);
  builder.SetMaxReceiveMessageSize(kMaxMessageBytes);
  builder.SetMaxSendMessageSize(kMaxMessageBytes);
  // gRPC sets SO_REUSEPORT by default on Linux: a second tracker on a port already in use
  // would then start and silently share the port (and half the connections) with the first.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.RegisterService(service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server || *bound_port == 0) throw std::runtime_error("cannot listen on " + address);
  return server;
}

}  // namespace kiln::farm
