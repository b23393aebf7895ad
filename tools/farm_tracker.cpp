// `kiln tracker`: runs the device farm's tracker (rpc/farm/tracker.h) until SIGINT/SIGTERM.
#include "rpc/farm/tracker.h"
#include "rpc/farm/transport.h"
#include "tools/farm_args.h"
#include "tools/subcommands.h"

namespace kiln::tools {

Run add_tracker(CLI::App& app) {
  auto* cmd = app.add_subcommand("tracker", "run a device farm tracker");
  auto options = std::make_shared<farm::TrackerOptions>();
  auto token_file = std::make_shared<std::string>();
  cmd->add_option("--port", options->port, "port to listen on (0: any free port)")
      ->check(CLI::Range(0, 65535))
      ->default_val(9190);
  cmd->add_option("--bind", options->bind, "address to listen on")->default_val("127.0.0.1");
  cmd->add_option("--token-file", *token_file,
                  "file holding the farm token "
                  "(default: $KILN_FARM_TOKEN)");
  cmd->add_option("--tls-cert", options->tls_cert, "PEM certificate (TLS with --tls-key)");
  cmd->add_option("--tls-key", options->tls_key, "PEM private key");
  cmd->add_option("--heartbeat-timeout", options->scheduler.heartbeat_timeout_s,
                  "seconds of silence after which a worker's job is re-queued")
      ->check(CLI::Range(0.1, 86400.0))
      ->default_val(5.0);
  return [options, token_file] {
    options->token = as_user_error([&] { return farm::load_token(*token_file); });
    user_check(options->tls_cert.empty() == options->tls_key.empty())
        << "TLS needs both --tls-cert and --tls-key";
    check_listen_address(options->bind, options->port);
    return farm::run_tracker(*options);
  };
}

}  // namespace kiln::tools
