// Transitional: Target moved to compiler/target (kiln::Target).
#pragma once
#include "target/target.h"
namespace kiln::codegen {
using ::kiln::host_can_run;
using ::kiln::host_target;
using ::kiln::Target;
using ::kiln::target_from_name;
using ::kiln::target_preset_names;
}  // namespace kiln::codegen
