// Private to compiler/codegen. The LLVM machinery around code generation: target
// initialisation, TargetMachine creation, the optimisation pipeline (new pass manager) and
// object/assembly emission (legacy pass manager, as LLVM 19's backends still require).
#pragma once

#include <llvm/IR/Module.h>
#include <llvm/Target/TargetMachine.h>

#include <memory>
#include <string>
#include <vector>

#include "compiler/target/target.h"

namespace kiln::codegen {

// Registers the X86 and AArch64 backends (once per process).
void initialize_llvm_targets();
std::unique_ptr<llvm::TargetMachine> make_target_machine(const Target& target, int opt_level);
// Throws InternalError with LLVM's message when the module is malformed.
void verify_module(const llvm::Module& m, const char* when);
// O1..O3 run LLVM's default per-module pipeline; O0 only inlines the always-inline bodies.
// Library functions are all marked unavailable so no pass invents a memset or libm call.
void optimize_module(llvm::Module& m, llvm::TargetMachine& tm, int opt_level);
// An object file, or target assembly text.
std::vector<uint8_t> emit_object(llvm::Module& m, llvm::TargetMachine& tm);
// `verbose`: with the assembler's comments (loop headers, "Spill" and "Reload" on the stack
// accesses register allocation added), which machine_code_analysis.h reads.
std::string emit_assembly(llvm::Module& m, llvm::TargetMachine& tm, bool verbose = false);

}  // namespace kiln::codegen
