// One call from lowered kernels to a shared object on disk: compile_module, then
// link_shared_object. What tests, the tuner's builder and `kiln compile` use.
#pragma once

#include <string>
#include <vector>

#include "compiler/codegen/codegen.h"

namespace kiln::codegen {

// Builds `out_path`; returns the module (its object, and IR/assembly when asked for).
CompiledModule build_shared_object(const std::vector<ir::LoweredFunc>& funcs, const Target& target,
                                   const std::string& out_path, const CodegenOptions& options = {});

}  // namespace kiln::codegen
