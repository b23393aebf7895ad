// The worker's command-line options, shared by the lean `kiln-worker` binary and the
// `kiln worker` subcommand so that both read the same flags.
#ifndef KILN_RPC_FARM_WORKER_CLI_H
#define KILN_RPC_FARM_WORKER_CLI_H

#include <CLI/CLI.hpp>
#include <sstream>
#include <string>

#include "rpc/farm/transport.h"
#include "rpc/farm/worker.h"

namespace kiln::farm {

struct WorkerCli {
  WorkerOptions options;
  std::string token_file;
  std::string sandbox_prefix;  // space-separated, e.g. "qemu-aarch64 -cpu max -L /"
};

inline void add_worker_options(CLI::App& app, WorkerCli& cli) {
  auto* tracker =
      app.add_option("--tracker", cli.options.tracker, "join the farm of this tracker, HOST:PORT");
  auto* listen = app.add_option("--listen", cli.options.listen,
                                "direct mode, no tracker: serve clients on [HOST:]PORT "
                                "(host default 127.0.0.1; port 0: any free port)");
  tracker->excludes(listen);
  app.add_option("--key", cli.options.key,
                 "device key this worker serves (required with --tracker; with --listen, "
                 "batches for other keys are refused, and without it any key is taken)");
  app.add_option("--token-file", cli.token_file,
                 "file holding the farm token "
                 "(default: $KILN_FARM_TOKEN)");
  app.add_option("--tls-ca", cli.options.tls_ca, "PEM root certificate of a TLS tracker");
  app.add_option("--tls-cert", cli.options.tls_cert,
                 "direct mode: PEM certificate (with --tls-key)");
  app.add_option("--tls-key", cli.options.tls_key, "direct mode: PEM private key");
  app.add_option("--name", cli.options.name, "label shown by `kiln farm status`");
  app.add_option("--sandbox", cli.options.sandbox.helper, "path of kiln-kernel-runner (the child each job runs in)");
  app.add_option("--sandbox-prefix", cli.sandbox_prefix,
                 "command the sandbox runs under, e.g. \"qemu-aarch64 -cpu max -L /\"");
  app.add_option("--mem-mb", cli.options.sandbox.mem_mb,
                 "address-space limit of a measurement in MiB (0: none)");
}

// Fills what the flags leave to be derived: the token, the prefix, the helper's default path.
inline WorkerOptions finish_worker_options(WorkerCli cli, const std::string& helper_fallback) {
  cli.options.token = load_token(cli.token_file);
  std::istringstream words(cli.sandbox_prefix);
  for (std::string w; words >> w;) cli.options.sandbox.prefix.push_back(w);
  if (cli.options.sandbox.helper.empty()) {
    cli.options.sandbox.helper = default_sandbox_helper(helper_fallback);
  }
  return cli.options;
}

}  // namespace kiln::farm

#endif  // KILN_RPC_FARM_WORKER_CLI_H
