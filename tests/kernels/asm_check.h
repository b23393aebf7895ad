// What the kernel assembly tests share: a template's kernel compiled to assembly text, and a
// count of the instructions in it that use a given register class or operand.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "schedules/op_template.h"

namespace kiln::testing {

// The assembly of `tpl`'s kernel for `w` on the preset or profile `target`, with its fallback
// config changed by `knobs`. Nothing runs, so any target's code can be checked here.
std::string template_assembly(const schedules::OpTemplate& tpl, const schedules::Workload& w,
                              const std::string& target,
                              const std::map<std::string, int64_t>& knobs = {});

// Instruction lines whose mnemonic (after an encoding prefix such as {vex}) starts with
// `mnemonic` and that mention `operand`.
int count_instructions(const std::string& assembly, const std::string& mnemonic,
                       const std::string& operand);

}  // namespace kiln::testing
