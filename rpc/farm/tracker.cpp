// The tracker process: the farm service (service.h) over a Scheduler, plus the reaper of
// silent workers and of batches nobody watches.
#include "rpc/farm/tracker.h"

#include <signal.h>

#include <cstdio>
#include <stdexcept>

#include "rpc/farm/parent_watch.h"
#include "rpc/farm/service.h"

namespace kiln::farm {

int run_tracker(const TrackerOptions& options) {
  exit_with_parent_if_asked();
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
  ServiceOptions so;
  so.token = options.token;
  const auto service = make_farm_service(scheduler, so);
  int port = 0;
  const auto server = start_farm_server(service.get(), options.bind, options.port, options.tls_cert,
                                        options.tls_key, &port);
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
    for (const uint64_t id : scheduler.drop_unwatched_batches()) {
      std::fprintf(stderr, "kiln tracker: nobody watched batch %llu; cancelled and dropped\n",
                   static_cast<unsigned long long>(id));
    }
  }
  std::fprintf(stderr, "kiln tracker: shutting down\n");
  scheduler.shutdown();
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  return 0;
}

}  // namespace kiln::farm
