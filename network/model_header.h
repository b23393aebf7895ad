// model.h of a compiled model: what a board application includes to link `model.a` statically
// instead of loading model.so. It declares the model's entry table (kiln_model_entry,
// runtime/include/kiln/kernel_abi.h) under the model's name, describes its inputs and outputs
// (names, dtypes, shapes, byte sizes as constants) and says how to pair it with model.params.
#pragma once

#include <string>

#include "compiler/codegen/executor.h"

namespace kiln::network {

// The header's text for `plan` built for the target named `target_name`.
std::string model_header_text(const codegen::ExecutorPlan& plan, const std::string& target_name);

}  // namespace kiln::network
