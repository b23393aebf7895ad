// The command-line form of one operator instance, shared by `kiln inspect` and `kiln tune`:
// --op, --shape in the op's natural form, --param NAME=VALUE, conv/pool attributes, --dtype,
// --epilogue and --run-time; and the template to use for it.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "compiler/target/target.h"
#include "schedules/op_template.h"

namespace kiln::tools {

struct WorkloadArgs {
  std::string op, shape, dtype = "f32";
  std::vector<std::string> params, epilogue;
  std::vector<std::string> run_time;  // --run-time: sizes the kernel takes at run time
  // Unset unless given; given values must be in range and taken by the op (no silent
  // defaults, nothing ignored).
  std::optional<int64_t> stride, pad, groups, dilation;
};

void add_workload_options(CLI::App& cmd, WorkloadArgs& a);
// UserError naming the flag for anything malformed or out of range.
schedules::Workload make_workload(const WorkloadArgs& a);
// The named template (it must implement the workload's op and apply to it on `target`), or
// the registry's first for the workload; the workload validated for it (OpTemplate::validate).
const schedules::OpTemplate& pick_template(const schedules::Workload& w, const Target& target,
                                           const std::string& name);

}  // namespace kiln::tools
