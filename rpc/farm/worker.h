// The worker process, in one of two modes:
//
// - Farm mode (`--tracker HOST:PORT`): dials out to the tracker (so a board behind NAT can
//   join), registers under its device key, long-polls for jobs, runs each in the sandbox,
//   reports the result, and keeps its lease alive with heartbeats from a second thread.
//   Re-registers when the tracker forgets it (tracker restart, or it was silent too long).
// - Direct mode (`--listen [HOST:]PORT`): a single board on a desk, no tracker. The worker
//   serves the client half of the farm's service itself (Submit, Watch, Cancel, Status: see
//   service.h) on loopback unless told otherwise, with the farm token required, and takes the
//   submitted jobs from an in-process Scheduler. A FarmClient pointed at it works unchanged.
//
// Both stop on SIGINT/SIGTERM.
#ifndef KILN_RPC_FARM_WORKER_H
#define KILN_RPC_FARM_WORKER_H

#include <atomic>
#include <functional>
#include <string>

#include "rpc/farm/sandbox.h"

namespace kiln::farm {

struct WorkerOptions {
  std::string tracker;  // farm mode: HOST:PORT
  std::string listen;   // direct mode: [HOST:]PORT (host default 127.0.0.1, port 0: any free)
  std::string key;      // farm mode: required; direct mode: "" takes batches for any key
  std::string token;
  std::string tls_ca;             // farm mode: PEM root certificate of a TLS tracker
  std::string tls_cert, tls_key;  // direct mode: serve TLS with these PEM files
  std::string name;               // shown by `farm status`; default host name and pid
  SandboxConfig sandbox;
  // What runs a job; unset: measuring it in the sandbox (run_in_sandbox). `kiln worker --role
  // builder` sets a compiler here (tuner/measure/farm_builders.h): the lean kiln-worker has none.
  std::function<pb::Result(const pb::Job&, const std::atomic<bool>& cancel)> run_job;
};

// Serves jobs until SIGINT or SIGTERM (returns 0) or until the tracker rejects the token
// (returns 2). In direct mode prints "kiln-worker: listening on HOST:PORT" on stdout (flushed)
// once it accepts connections. Throws std::runtime_error for bad options or when it cannot
// listen.
int run_worker(const WorkerOptions& options);

// Splits "[HOST:]PORT" into host (default 127.0.0.1) and port; throws std::runtime_error naming
// the value when it is not of that form.
std::pair<std::string, int> parse_listen_address(const std::string& value);

}  // namespace kiln::farm

#endif  // KILN_RPC_FARM_WORKER_H
