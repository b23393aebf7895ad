// `kiln worker`: the farm worker (the same as the lean kiln-worker binary) on a host, or with
// `--role builder` a builder that compiles candidates for the farm's tuners.
#include "rpc/farm/worker_cli.h"
#include "tools/farm_args.h"
#include "tools/subcommands.h"
#include "tuner/measure/farm_builders.h"

#ifndef KILN_FARM_SANDBOX_PATH
#define KILN_FARM_SANDBOX_PATH ""
#endif

namespace kiln::tools {

Run add_worker(CLI::App& app) {
  auto* cmd = app.add_subcommand("worker", "serve kernel measurements (or builds) for a device farm");
  auto cli = std::make_shared<farm::WorkerCli>();
  farm::add_worker_options(*cmd, *cli);
  auto role = std::make_shared<std::string>("measure");
  cmd->add_option("--role", *role,
                  "measure: time kernels on this machine; builder: compile candidates for any "
                  "target (kiln tune --build-key KEY sends them)")
      ->check(CLI::IsMember({"measure", "builder"}))
      ->capture_default_str();
  return [cli, role] {
    if (cli->print_board) return farm::print_board();
    farm::WorkerOptions o =
        as_user_error([&] { return farm::finish_worker_options(*cli, KILN_FARM_SANDBOX_PATH); });
    if (*role == "builder") o.run_job = tuner::run_build_job;
    return farm::run_worker(o);
  };
}

}  // namespace kiln::tools
