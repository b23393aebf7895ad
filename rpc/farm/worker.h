// The worker process: dials out to the tracker (so a board behind NAT can join), registers
// under its device key, long-polls for jobs, runs each in the sandbox, reports the result,
// and keeps its lease alive with heartbeats from a second thread. Re-registers when the
// tracker forgets it (tracker restart, or it was silent too long); stops on SIGINT/SIGTERM.
#ifndef KILN_RPC_FARM_WORKER_H
#define KILN_RPC_FARM_WORKER_H

#include <string>

#include "rpc/farm/sandbox.h"

namespace kiln::farm {

struct WorkerOptions {
  std::string tracker;  // HOST:PORT
  std::string key;
  std::string token;
  std::string tls_ca;  // PEM root certificate when the tracker speaks TLS
  std::string name;    // shown by `farm status`; default host name and pid
  SandboxConfig sandbox;
};

// Serves jobs until SIGINT or SIGTERM (returns 0) or until the tracker rejects the token
// (returns 2).
int run_worker(const WorkerOptions& options);

}  // namespace kiln::farm

#endif  // KILN_RPC_FARM_WORKER_H
