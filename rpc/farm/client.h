// The client library the tuner uses to measure on a farm: submit a batch of jobs for a device
// key, read results as they finish (streamed), cancel; and the farm's status.
//
// Jobs whose check asks for return_outputs without giving a reference are compared against
// the first correct candidate of their batch (the first result without error, in the order
// results arrive): later ones that differ come back as WRONG_RESULT.
//
// The address may name a tracker or a worker in direct mode (`kiln-worker --listen`, a single
// board with no tracker): both serve the same client calls, so nothing here changes; the
// key of a batch must then be the worker's own (or anything, when it was started without
// --key), and status().direct() says which one answered.
#ifndef KILN_RPC_FARM_CLIENT_H
#define KILN_RPC_FARM_CLIENT_H

#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "rpc/farm/farm.grpc.pb.h"

namespace kiln::farm {

// A failed farm call: which call, and gRPC's code and message.
class FarmError : public std::runtime_error {
 public:
  FarmError(const std::string& what, grpc::StatusCode code)
      : std::runtime_error(what), code_(code) {}
  grpc::StatusCode code() const { return code_; }

 private:
  grpc::StatusCode code_;
};

// How the client rides out a tracker that cannot be reached (gRPC UNAVAILABLE: not started
// yet, restarting, network gone): Submit, Status and Cancel retry with jittered exponential
// backoff (backoff.h, capped at 3 s) for up to `give_up_s`, then fail with the last error.
// Only UNAVAILABLE is retried: the call never reached the tracker, or the tracker was full
// (scheduler.h max_held_bytes) and queued nothing, so a retried Submit does not queue its
// batch twice. `log` gets one line when the tracker becomes unreachable and one
// when it answers again, never one per attempt (default: stderr).
struct RetryPolicy {
  double give_up_s = 10;
  std::function<void(const std::string&)> log;
};

class Batch {
 public:
  ~Batch();  // an unfinished batch stops watching; the tracker then cancels its jobs
  uint64_t id() const { return id_; }
  std::size_t size() const { return jobs_.size(); }
  // Blocks for the next finished result; false once every result has come. Throws FarmError
  // when the stream breaks.
  bool next(pb::Result* result);
  // Every result, in submission order (blocks until all are in).
  std::vector<pb::Result> wait_all();
  // Unfinished jobs end as CANCELLED (their results still arrive through next()).
  void cancel();

 private:
  friend class FarmClient;
  Batch(pb::Tracker::Stub* stub, std::string token, std::string address, RetryPolicy retry,
        uint64_t id, std::vector<pb::Job> jobs);
  void check_against_first_correct(pb::Result* result);

  pb::Tracker::Stub* stub_;
  const std::string token_, address_;
  const RetryPolicy retry_;
  const uint64_t id_;
  std::vector<pb::Job> jobs_;  // without their .so bytes
  grpc::ClientContext ctx_;
  std::unique_ptr<grpc::ClientReader<pb::Result>> reader_;
  std::size_t received_ = 0;
  std::vector<std::string> first_correct_;  // outputs of the first correct candidate
  bool have_first_correct_ = false;
};

class FarmClient {
 public:
  // `address` is "HOST:PORT"; `tls_ca` a PEM file when the tracker speaks TLS.
  FarmClient(std::string address, std::string token, std::string tls_ca = "",
             RetryPolicy retry = {});
  std::unique_ptr<Batch> submit(const std::string& key, std::vector<pb::Job> jobs);
  pb::StatusReply status();
  const std::string& client_id() const { return client_id_; }

 private:
  const std::string address_, token_, client_id_;
  const RetryPolicy retry_;
  std::unique_ptr<pb::Tracker::Stub> stub_;
};

// The status as a table: one line per key (queue lengths), then one per worker (counts).
std::string format_status(const pb::StatusReply& status);

}  // namespace kiln::farm

#endif  // KILN_RPC_FARM_CLIENT_H
