// Every operator template kiln has, listed explicitly (static libraries drop
// self-registering objects nobody references).
#pragma once

#include <string>
#include <vector>

#include "schedules/op_template.h"

namespace kiln::schedules {

const std::vector<const OpTemplate*>& all_templates();
// The templates that can build `w` for `t`, best first (the first is the default).
std::vector<const OpTemplate*> templates_for(const Workload& w, const Target& t);
// UserError listing the known names when there is none by that name.
const OpTemplate& template_named(const std::string& name);

}  // namespace kiln::schedules
