// Code generation: lowered kernels (ir::LoweredFunc) to one relocatable object for a Target,
// through LLVM. Each kernel becomes an exported `int32_t NAME(void* const* args)` that
// follows runtime/include/kiln/kernel_abi.h; the module also exports `kiln_module_init`.
// The object uses no library function (no libm, no libgcc helpers), so it links into a
// shared object with nothing but itself (see codegen/link.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/target/target.h"
#include "compiler/ir/lowered_func.h"

namespace kiln::codegen {

struct CompiledModule {
  std::vector<uint8_t> object;  // an ELF relocatable object for the target
  std::string llvm_ir;          // optimised LLVM IR, when asked for
  std::string assembly;         // target assembly, when asked for
};

struct CodegenOptions {
  bool emit_llvm_ir = false;
  bool emit_assembly = false;
  bool verbose_assembly = false;  // with the assembler's comments (spills, loop headers)
  int opt_level = 3;  // 0..3, as -O
};

// Throws UserError for input the target cannot run (a bf16 intrinsic without bf16, a
// stack buffer of unknown size...) and InternalError when LLVM rejects what kiln built.
// The target as LLVM sees it: "host" (cpu "host") becomes this machine's CPU name and LLVM's
// complete list of its features, enabled and disabled; other targets are unchanged.
Target llvm_target(const Target& target);

CompiledModule compile_module(const std::vector<ir::LoweredFunc>& funcs, const Target& target,
                              const CodegenOptions& options = {});

}  // namespace kiln::codegen
