// Each `kiln` subcommand registers its options on the CLI11 app and returns the function
// that runs it (after parsing). main.cpp lists them.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>

namespace kiln::tools {

using Run = std::function<int()>;

Run add_demo(CLI::App& app);
Run add_inspect(CLI::App& app);
Run add_analyze(CLI::App& app);
Run add_tune(CLI::App& app);
Run add_records(CLI::App& app);
Run add_compile(CLI::App& app);
Run add_quantize(CLI::App& app);
Run add_run(CLI::App& app);
Run add_report(CLI::App& app);
Run add_targets(CLI::App& app);
// The device farm (only when built with gRPC: KILN_WITH_FARM).
Run add_tracker(CLI::App& app);
Run add_worker(CLI::App& app);
Run add_farm(CLI::App& app);

}  // namespace kiln::tools
