// kiln-worker: the lean worker binary installed on boards (runtime + rpc, no LLVM). Dials
// out to a tracker and serves measurement jobs for one device key, or (direct mode, a board on
// a desk) serves clients itself.
//
//   kiln-worker --tracker HOST:PORT --key KEY [--token-file F] [--sandbox-prefix "..."]
//   kiln-worker --listen [HOST:]PORT [--key KEY] [--token-file F]
//   kiln-worker --print-board      # the core, its features, the --target to tune for it
#include <cstdio>

#include "rpc/farm/worker_cli.h"

#ifndef KILN_FARM_SANDBOX_PATH
#define KILN_FARM_SANDBOX_PATH ""
#endif

int main(int argc, char** argv) {
  CLI::App app{"kiln-worker: serves kernel measurements for a kiln device farm"};
  kiln::farm::WorkerCli cli;
  kiln::farm::add_worker_options(app, cli);
  CLI11_PARSE(app, argc, argv);
  if (cli.print_board) return kiln::farm::print_board();
  try {
    return kiln::farm::run_worker(kiln::farm::finish_worker_options(cli, KILN_FARM_SANDBOX_PATH));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kiln-worker: error: %s\n", e.what());
    return 1;
  }
}
