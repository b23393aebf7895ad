// The farm's client- and worker-facing gRPC service (farm.proto's `Tracker`) over a Scheduler:
// the token check, request validation, then the Scheduler. The tracker process serves it, and
// so does a worker in direct mode (`kiln-worker --listen`, a single board on a desk with no
// tracker), where the worker takes its jobs from the Scheduler in process: the worker-facing
// calls (Register, Lease, Heartbeat, Report) are refused there, and Submit takes only the
// worker's own device key. A client cannot tell the two apart otherwise, so FarmClient talks to
// either unchanged; Status says which it is.
#ifndef KILN_RPC_FARM_SERVICE_H
#define KILN_RPC_FARM_SERVICE_H

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>

#include "rpc/farm/farm.grpc.pb.h"
#include "rpc/farm/scheduler.h"

namespace kiln::farm {

struct ServiceOptions {
  std::string token;  // every RPC must carry it
  // Direct mode: the one device key served. Submit with another key is refused, unless
  // accept_any_key (the worker was started without --key): then every batch goes to `key`.
  bool direct = false;
  std::string key;
  bool accept_any_key = false;
};

std::unique_ptr<pb::Tracker::Service> make_farm_service(Scheduler& scheduler,
                                                        ServiceOptions options);

// A gRPC server for `service` on `bind`:`port` (port 0: any free port) with the farm's message
// size limits, TLS when `tls_cert` and `tls_key` (PEM files) are both given. Returns the server
// and sets *bound_port; throws std::runtime_error naming the address when it cannot listen.
std::unique_ptr<grpc::Server> start_farm_server(grpc::Service* service, const std::string& bind,
                                                int port, const std::string& tls_cert,
                                                const std::string& tls_key, int* bound_port);

}  // namespace kiln::farm

#endif  // KILN_RPC_FARM_SERVICE_H
