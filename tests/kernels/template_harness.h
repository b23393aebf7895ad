// Checks an operator template end to end: build a config of its space for a workload and a
// target, pack random logical inputs into the kernel's layout, run the kernel (natively or
// under qemu), unpack its output and compare with the template's reference.
#pragma once

#include <string>

#include "schedules/op_template.h"

namespace kiln::testing {

// config_seed < 0: the template's fallback config; otherwise a random config of its space.
// Returns a skip reason (empty when it ran); failures are gtest failures.
std::string check_template(const schedules::OpTemplate& tpl, const schedules::Workload& w,
                           const std::string& target, int config_seed);

}  // namespace kiln::testing
