// Each `kiln` subcommand registers its options on the CLI11 app and returns the function
// that runs it (after parsing). main.cpp lists them.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>

namespace kiln::tools {

using Run = std::function<int()>;

Run add_demo(CLI::App& app);

}  // namespace kiln::tools
