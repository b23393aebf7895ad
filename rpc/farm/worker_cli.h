// The worker's command-line options, shared by the lean `kiln-worker` binary and the
// `kiln worker` subcommand so that both read the same flags.
#ifndef KILN_RPC_FARM_WORKER_CLI_H
#define KILN_RPC_FARM_WORKER_CLI_H

#include <CLI/CLI.hpp>
#include <cstdio>
#include <sstream>
#include <string>

#include "kiln/cpu_features.h"
#include "rpc/farm/transport.h"
#include "rpc/farm/worker.h"
#include "runtime/process/machine.h"

namespace kiln::farm {

struct WorkerCli {
  WorkerOptions options;
  std::string token_file;
  std::string sandbox_prefix;  // space-separated, e.g. "qemu-aarch64 -cpu max -L /"
  bool print_board = false;    // print what this machine is and which --target fits it
};

// --print-board: the machine as the worker sees it (the core from its ID register, the
// features kiln's kernels use) and the `--target` to tune and compile for it, so a user knows
// what to give `kiln tune` before the farm measures anything.
inline int print_board(std::FILE* out = stdout) {
  const MachineIdentity& m = this_machine();
  std::string features;
  for (const std::string& f : m.features) features += (features.empty() ? "" : " ") + f;
  const BoardTarget t = suggested_target(m);
  const std::string name = m.vendor == "unknown" ? m.model : m.vendor + " " + m.model;
  std::fprintf(out, "board: %s, %u cores (%s)\n", name.c_str(), m.cores,
               std::string(cpu_arch()).c_str());
  std::fprintf(out, "features: %s\n", features.empty() ? "(none kiln uses)" : features.c_str());
  std::fprintf(out, "kiln target: %s (%s)\n", t.target.c_str(), t.why.c_str());
  std::fprintf(out,
               "tune for it: kiln tune MODEL.onnx --target %s --farm TRACKER:PORT --key KEY "
               "--log board.jsonl\n",
               t.target.c_str());
  return 0;
}

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
  app.add_option("--sandbox", cli.options.sandbox.helper,
                 "path of kiln-kernel-runner (the child each job runs in)");
  app.add_option("--sandbox-prefix", cli.sandbox_prefix,
                 "command the sandbox runs under, e.g. \"qemu-aarch64 -cpu max -L /\"");
  app.add_option("--mem-mb", cli.options.sandbox.mem_mb,
                 "address-space limit of a measurement in MiB (0: none)");
  app.add_flag("--print-board", cli.print_board,
               "print this machine's core, its features and the --target to tune for it, and "
               "exit");
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
