// How `kiln inspect --shape a,b,c` names an op's shape parameters: a table by op name
// alone, kept apart from registry.h so that the checks of validate.h (and through them every
// template's instantiate) need no template's header.
#pragma once

#include <string>
#include <vector>

namespace kiln::schedules {

// How `kiln inspect --shape a,b,c` names an op's shape parameters, e.g. dense: M, N, K.
// Empty for ops that take only --param NAME=VALUE.
std::vector<std::string> shape_form(const std::string& op);

}  // namespace kiln::schedules
