// compile_module: the order of codegen, top to bottom.
#include "compiler/codegen/codegen.h"

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Transforms/Utils/Cloning.h>

#include "compiler/codegen/arch_hooks.h"
#include "compiler/codegen/codegen_llvm.h"
#include "compiler/codegen/llvm_passes.h"
#include "compiler/base/error.h"

namespace kiln::codegen {

CompiledModule compile_module(const std::vector<ir::LoweredFunc>& funcs, const Target& requested,
                              const CodegenOptions& options) {
  return compile_module_with(funcs, requested, options, {});
}

CompiledModule compile_module_with(const std::vector<ir::LoweredFunc>& funcs,
                                   const Target& requested, const CodegenOptions& options,
                                   const ModuleExtension& extend,
                                   const OptimizedModuleHook& optimized) {
  const Target target = llvm_target(requested);
  user_check(options.opt_level >= 0 && options.opt_level <= 3)
      << "opt_level must be 0..3, got " << options.opt_level;
  // Per-architecture answers first: an unsupported triple is the user's error, not LLVM's.
  std::unique_ptr<ArchHooks> hooks = make_arch_hooks(target);
  std::unique_ptr<llvm::TargetMachine> tm = make_target_machine(target, options.opt_level);

  // One context per call: compile_module may run on several threads at once.
  llvm::LLVMContext context;
  llvm::Module module("kiln", context);
  module.setTargetTriple(target.triple);
  module.setDataLayout(tm->createDataLayout());

  CodeGenLLVM cg(module, *hooks);
  cg.add_target_record(requested);
  cg.add_module_init();
  for (const ir::LoweredFunc& f : funcs) cg.add_kernel(f);
  if (extend) extend(module);  // e.g. the model executor, optimised with the kernels
  verify_module(module, "from kiln's codegen");

  optimize_module(module, *tm, options.opt_level);
  verify_module(module, "after optimisation");

  if (optimized) optimized(module, *tm);

  CompiledModule out;
  if (options.emit_llvm_ir) {
    llvm::raw_string_ostream os(out.llvm_ir);
    module.print(os, nullptr);
  }
  if (options.emit_assembly) {
    // Codegen passes rewrite the IR they run on; the object is made from an untouched copy.
    std::unique_ptr<llvm::Module> copy = llvm::CloneModule(module);
    out.assembly = emit_assembly(*copy, *tm, options.verbose_assembly);
  }
  out.object = emit_object(module, *tm);
  return out;
}

}  // namespace kiln::codegen
