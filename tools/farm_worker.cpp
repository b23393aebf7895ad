// `kiln worker`: the farm worker (the same as the lean kiln-worker binary) on a host.
#include "rpc/farm/worker_cli.h"
#include "tools/farm_args.h"
#include "tools/subcommands.h"

#ifndef KILN_FARM_SANDBOX_PATH
#define KILN_FARM_SANDBOX_PATH ""
#endif

namespace kiln::tools {

Run add_worker(CLI::App& app) {
  auto* cmd = app.add_subcommand("worker", "serve kernel measurements for a device farm");
  auto cli = std::make_shared<farm::WorkerCli>();
  farm::add_worker_options(*cmd, *cli);
  return [cli] {
    farm::WorkerOptions o =
        as_user_error([&] { return farm::finish_worker_options(*cli, KILN_FARM_SANDBOX_PATH); });
    return farm::run_worker(o);
  };
}

}  // namespace kiln::tools
