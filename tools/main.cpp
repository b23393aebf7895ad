// kiln: the command line. Errors in the user's input print as one clear line and exit 2;
// internal errors (kiln bugs) say so and exit 3.
#include <cstdio>

#include "compiler/base/error.h"
#include "runtime/process/machine.h"
#include "tools/subcommands.h"
#ifdef KILN_WITH_FARM
#include "rpc/farm/client.h"

namespace {
// A farm that cannot be reached, or that refuses the token or the key, is the user's
// address or credentials, not a failure of kiln's: exit 2 like any other bad input.
bool is_users_farm_error(grpc::StatusCode code) {
  return code == grpc::StatusCode::UNAVAILABLE || code == grpc::StatusCode::UNAUTHENTICATED ||
         code == grpc::StatusCode::PERMISSION_DENIED || code == grpc::StatusCode::INVALID_ARGUMENT ||
         code == grpc::StatusCode::NOT_FOUND || code == grpc::StatusCode::DEADLINE_EXCEEDED;
}
}  // namespace
#endif

int main(int argc, char** argv) {
  CLI::App app{"kiln: an ahead-of-time tensor kernel compiler and autotuner"};
  app.set_version_flag("--version", std::string("kiln ") + kiln::kiln_version());
  app.require_subcommand(1);
  std::vector<std::pair<CLI::App*, kiln::tools::Run>> commands;
  auto add = [&](auto add_fn) {
    size_t before = app.get_subcommands({}).size();
    kiln::tools::Run run = add_fn(app);
    commands.emplace_back(app.get_subcommands({})[before], run);
  };
  add(kiln::tools::add_demo);
  add(kiln::tools::add_inspect);
  add(kiln::tools::add_analyze);
  add(kiln::tools::add_tune);
  add(kiln::tools::add_records);
  add(kiln::tools::add_compile);
  add(kiln::tools::add_quantize);
  add(kiln::tools::add_run);
  add(kiln::tools::add_report);
  add(kiln::tools::add_targets);
#ifdef KILN_WITH_FARM
  add(kiln::tools::add_tracker);
  add(kiln::tools::add_worker);
  add(kiln::tools::add_farm);
#endif
  try {
    app.parse(argc, argv);
    for (auto& [cmd, run] : commands)
      if (cmd->parsed()) return run();
  } catch (const CLI::ParseError& e) {
    // --help prints and exits 0; any other parse error (a bad flag) is bad input too.
    if (e.get_exit_code() == 0) return app.exit(e);
    std::fprintf(stderr, "kiln: error: %s (see --help)\n", e.what());
    return 2;
  } catch (const kiln::UserError& e) {
    std::fprintf(stderr, "kiln: error: %s\n", e.what());
    return 2;
  } catch (const kiln::InternalError& e) {
    std::fprintf(stderr, "kiln: %s\n", e.what());
    return 3;
#ifdef KILN_WITH_FARM
  } catch (const kiln::farm::FarmError& e) {
    std::fprintf(stderr, "kiln: error: %s\n", e.what());
    return is_users_farm_error(e.code()) ? 2 : 1;
#endif
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kiln: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
