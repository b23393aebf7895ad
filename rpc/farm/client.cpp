// Batches over the tracker's Submit/Watch/Cancel, and first-correct checking.
#include "rpc/farm/client.h"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <random>

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

}  // namespace

FarmClient::FarmClient(std::string address, std::string token, std::string tls_ca)
    : address_(std::move(address)),
      token_(std::move(token)),
      client_id_(unique_client_id()),
      stub_(pb::Tracker::NewStub(make_channel(address_, tls_ca))) {}

std::unique_ptr<Batch> FarmClient::submit(const std::string& key, std::vector<pb::Job> jobs) {
  pb::SubmitRequest req;
  req.set_client(client_id_);
  req.set_key(key);
  for (auto& j : jobs) *req.add_jobs() = j;
  pb::SubmitReply reply;
  grpc::ClientContext ctx;
  prepare_context(ctx, token_, 60);
  const grpc::Status s = stub_->Submit(&ctx, req, &reply);
  if (!s.ok()) throw error(address_, "Submit", s);
  for (auto& j : jobs) j.clear_so();
  return std::unique_ptr<Batch>(
      new Batch(stub_.get(), token_, address_, reply.batch_id(), std::move(jobs)));
}

pb::StatusReply FarmClient::status() {
  pb::StatusReply reply;
  grpc::ClientContext ctx;
  prepare_context(ctx, token_, 10);
  const grpc::Status s = stub_->Status(&ctx, pb::StatusRequest{}, &reply);
  if (!s.ok()) throw error(address_, "Status", s);
  return reply;
}

Batch::Batch(pb::Tracker::Stub* stub, std::string token, std::string address, uint64_t id,
             std::vector<pb::Job> jobs)
    : stub_(stub),
      token_(std::move(token)),
      address_(std::move(address)),
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
                        first_correct_[k], job.check().rtol(), job.check().atol());
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
  grpc::ClientContext ctx;
  prepare_context(ctx, token_, 10);
  const grpc::Status s = stub_->Cancel(&ctx, req, &reply);
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
