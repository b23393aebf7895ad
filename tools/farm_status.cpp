// `kiln farm status`: keys, workers, queue lengths and per-worker job counts of a farm.
#include <cstdio>

#include "rpc/farm/client.h"
#include "rpc/farm/transport.h"
#include "tools/farm_args.h"
#include "tools/subcommands.h"

namespace kiln::tools {

Run add_farm(CLI::App& app) {
  auto* cmd = app.add_subcommand("farm", "inspect a device farm");
  cmd->require_subcommand(1);
  auto* status = cmd->add_subcommand("status", "print keys, workers, queues and job counts");
  auto farm_address = std::make_shared<std::string>();
  auto token_file = std::make_shared<std::string>();
  auto tls_ca = std::make_shared<std::string>();
  status->add_option("--farm", *farm_address, "the tracker, HOST:PORT")->required();
  status->add_option("--token-file", *token_file,
                     "file holding the farm token "
                     "(default: $KILN_FARM_TOKEN)");
  status->add_option("--tls-ca", *tls_ca, "PEM root certificate of a TLS tracker");
  return [=] {
    // A missing token or a farm that cannot be reached at the address given: bad flags.
    std::string status = as_user_error([&] {
      // A status query answers now or says why: no retrying a tracker that is not there.
      farm::FarmClient client(*farm_address, farm::load_token(*token_file), *tls_ca,
                              farm::RetryPolicy{0, nullptr});
      return farm::format_status(client.status());
    });
    std::fputs(status.c_str(), stdout);
    return 0;
  };
}

}  // namespace kiln::tools
