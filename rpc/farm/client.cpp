// Batches over the tracker's Submit/Watch/Cancel, and first-correct checking.
#include "rpc/farm/client.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <random>
#include <thread>

#include "rpc/farm/backoff.h"
#include "rpc/farm/data.h"
#include "rpc/farm/transport.h"

namespace kiln::farm {
namespace {

std::string unique_client_id() {
  static std::atomic<int> counter{0};
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  return std::string(host) + ":" + std::to_string(getpid()) + ":" + std::to_string(counter++) +
         ":" + std::to_string(std::random_device{}() & 0xffff);
}

FarmError error(const std::string& address, const char* call, const grpc::Status& s) {
  return FarmError("farm " + address + ": " + call + ": " + s.error_message() + " (gRPC code " +
                       std::to_string(static_cast<int>(s.error_code())) + ")",
                   s.error_code());
}

// Runs `call(context)` (a unary RPC with a fresh context each time, `timeout_s` apart from
// the retries) until it returns anything but UNAVAILABLE or `retry.give_up_s` has passed.
template <typename Call>
grpc::Status call_with_retry(const std::string& address, const std::string& token,
                             const RetryPolicy& retry, const char* what, double timeout_s,
                             Call&& call) {
  using Clock = std::chrono::steady_clock;
  const auto give_up = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                          std::chrono::duration<double>(retry.give_up_s));
  auto log = [&](const std::string& line) {
    if (retry.log)
      retry.log(line);
    else
      std::fprintf(stderr, "%s\n", line.c_str());
  };
  Backoff backoff;
  bool unreachable = false;
  for (;;) {
    grpc::ClientContext ctx;
    prepare_context(ctx, token, timeout_s);
    const grpc::Status s = call(ctx);
    const auto now = Clock::now();
    if (s.error_code() != grpc::StatusCode::UNAVAILABLE || now >= give_up) {
      if (unreachable && s.error_code() != grpc::StatusCode::UNAVAILABLE)
        log("kiln farm client: reached " + address + " again");
      return s;
    }
    if (!unreachable)
      log("kiln farm client: " + std::string(what) + " to " + address + ": " + s.error_message() +
          "; retrying with backoff for up to " + std::to_string(static_cast<int>(retry.give_up_s)) +
          " s");
    unreachable = true;
    std::this_thread::sleep_for(
        std::min<Clock::duration>(std::chrono::milliseconds(backoff.next_ms()), give_up - now));
  }
}

}  // namespace

FarmClient::FarmClient(std::string address, std::string token, std::string tls_ca,
                       RetryPolicy retry)
    : address_(std::move(address)),
      token_(std::move(token)),
      client_id_(unique_client_id()),
      retry_(std::move(retry)),
      stub_(pb::Tracker::NewStub(make_channel(address_, tls_ca))) {}

std::unique_ptr<Batch> FarmClient::submit(const std::string& key, std::vector<pb::Job> jobs) {
  pb::SubmitRequest req;
  req.set_client(client_id_);
  req.set_key(key);
  for (auto& j : jobs) *req.add_jobs() = j;
  pb::SubmitReply reply;
  const grpc::Status s = call_with_retry(address_, token_, retry_, "Submit", 60, [&](auto& ctx) {
    return stub_->Submit(&ctx, req, &reply);
  });
  if (!s.ok()) throw error(address_, "Submit", s);
  for (auto& j : jobs) {  // the batch keeps what checking results needs, not the payloads
    j.clear_so();
    j.clear_model();
  }
  return std::unique_ptr<Batch>(
      new Batch(stub_.get(), token_, address_, retry_, reply.batch_id(), std::move(jobs)));
}

pb::StatusReply FarmClient::status() {
  pb::StatusReply reply;
  const grpc::Status s = call_with_retry(address_, token_, retry_, "Status", 10, [&](auto& ctx) {
    return stub_->Status(&ctx, pb::StatusRequest{}, &reply);
  });
  if (!s.ok()) throw error(address_, "Status", s);
  return reply;
}

Batch::Batch(pb::Tracker::Stub* stub, std::string token, std::string address, RetryPolicy retry,
             uint64_t id, std::vector<pb::Job> jobs)
    : stub_(stub),
      token_(std::move(token)),
      address_(std::move(address)),
      retry_(std::move(retry)),
      id_(id),
      jobs_(std::move(jobs)) {
  prepare_context(ctx_, token_, 0);
  pb::WatchRequest req;
  req.set_batch_id(id_);
  reader_ = stub_->Watch(&ctx_, req);
}

Batch::~Batch() {
  if (received_ < jobs_.size()) {
    ctx_.TryCancel();
    reader_->Finish();
  }
}

bool Batch::next(pb::Result* result) {
  if (received_ >= jobs_.size()) return false;
  if (!reader_->Read(result)) {
    const grpc::Status s = reader_->Finish();
    if (!s.ok()) throw error(address_, "Watch", s);
    throw FarmError("farm " + address_ + ": the result stream of batch " + std::to_string(id_) +
                        " ended after " + std::to_string(received_) + " of " +
                        std::to_string(jobs_.size()) + " results",
                    grpc::StatusCode::DATA_LOSS);
  }
  ++received_;
  check_against_first_correct(result);
  if (received_ == jobs_.size()) reader_->Finish();
  return true;
}

void Batch::check_against_first_correct(pb::Result* result) {
  if (result->index() >= jobs_.size()) return;
  const pb::Job& job = jobs_[result->index()];
  if (!job.check().return_outputs() || job.check().reference_size() > 0) return;
  if (result->error() != pb::OK) return;
  if (!have_first_correct_) {
    first_correct_.assign(result->outputs().begin(), result->outputs().end());
    have_first_correct_ = true;
    return;
  }
  for (int i = 0, k = 0; i < job.args_size(); ++i) {
    if (!job.args(i).is_output()) continue;
    if (k >= result->outputs_size() || static_cast<std::size_t>(k) >= first_correct_.size()) {
      break;
    }
    const std::string& got = result->outputs(k);
    const std::string why =
        compare_outputs(job.args(i).dtype(), std::vector<uint8_t>(got.begin(), got.end()),
                        first_correct_[k], job.check().rtol());
    if (!why.empty()) {
      result->set_error(pb::WRONG_RESULT);
      result->set_message("output argument " + std::to_string(i) +
                          " differs from the first correct candidate: " + why);
      return;
    }
    ++k;
  }
}

std::vector<pb::Result> Batch::wait_all() {
  std::vector<pb::Result> all(jobs_.size());
  pb::Result r;
  while (next(&r)) {
    if (r.index() < all.size()) all[r.index()] = r;
  }
  return all;
}

void Batch::cancel() {
  pb::CancelRequest req;
  req.set_batch_id(id_);
  pb::CancelReply reply;
  const grpc::Status s = call_with_retry(address_, token_, retry_, "Cancel", 10, [&](auto& ctx) {
    return stub_->Cancel(&ctx, req, &reply);
  });
  if (!s.ok() && s.error_code() != grpc::StatusCode::NOT_FOUND) throw error(address_, "Cancel", s);
}

std::string format_status(const pb::StatusReply& status) {
  std::string out = status.direct() ? "a direct worker (kiln-worker --listen), no tracker\n\n" : "";
  char line[512];
  std::snprintf(line, sizeof line, "%-20s %8s %8s %8s %8s\n", "KEY", "QUEUED", "RUNNING", "WORKERS",
                "CLIENTS");
  out += line;
  for (const auto& k : status.keys()) {
    std::snprintf(line, sizeof line, "%-20s %8u %8u %8u %8u\n", k.key().c_str(), k.queued(),
                  k.running(), k.workers(), k.clients());
    out += line;
  }
  std::snprintf(line, sizeof line, "\n%-20s %-14s %-8s %6s %9s %6s %9s %7s  %s\n", "WORKER", "KEY",
                "ARCH", "BUSY", "COMPLETED", "FAILED", "TIMED_OUT", "IDLE_S", "NAME");
  out += line;
  for (const auto& w : status.workers()) {
    std::snprintf(line, sizeof line, "%-20s %-14s %-8s %6s %9llu %6llu %9llu %7.1f  %s\n",
                  w.worker_id().c_str(), w.key().c_str(), w.arch().c_str(),
                  w.busy_job() ? "yes" : "no", static_cast<unsigned long long>(w.completed()),
                  static_cast<unsigned long long>(w.failed()),
                  static_cast<unsigned long long>(w.timed_out()), w.idle_s(), w.name().c_str());
    out += line;
  }
  return out;
}

}  // namespace kiln::farm
