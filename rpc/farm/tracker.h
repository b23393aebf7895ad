// The tracker process: a gRPC server over the Scheduler. `kiln tracker` calls run_tracker.
#ifndef KILN_RPC_FARM_TRACKER_H
#define KILN_RPC_FARM_TRACKER_H

#include <string>

#include "rpc/farm/scheduler.h"

namespace kiln::farm {

struct TrackerOptions {
  std::string bind = "127.0.0.1";  // loopback unless told otherwise
  int port = 9190;                 // 0: any free port (printed at start-up)
  std::string token;               // the farm token every RPC must carry
  std::string tls_cert, tls_key;   // PEM files; TLS when both are given
  SchedulerOptions scheduler;
};

// Serves until SIGINT or SIGTERM, then returns 0. Prints
// "kiln tracker: listening on ADDR:PORT" on stdout (flushed) once it accepts connections.
// Throws std::runtime_error when it cannot listen.
int run_tracker(const TrackerOptions& options);

}  // namespace kiln::farm

#endif  // KILN_RPC_FARM_TRACKER_H
