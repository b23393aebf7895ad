// Private to compiler/codegen. The object of `model.a`: a compiled model's optimised LLVM module
// turned into one that links statically beside other models. model.so exports kiln_model_run,
// kiln_model_info, kiln_module_init... by fixed names (dlopen keeps each .so's names apart); in
// one statically linked program those names would clash, so here every symbol becomes internal
// and one exported table, the kiln_model_entry of runtime/include/kiln/kernel_abi.h, points at
// them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace llvm {
class Module;
class TargetMachine;
}  // namespace llvm

namespace kiln::codegen {

// The object for static linking, from a copy of `optimized` (a model module: kernels, executor,
// info and target records); `entry_symbol` names its kiln_model_entry table.
std::vector<uint8_t> static_model_object(const llvm::Module& optimized,
                                         const std::string& entry_symbol, llvm::TargetMachine& tm);

}  // namespace kiln::codegen
