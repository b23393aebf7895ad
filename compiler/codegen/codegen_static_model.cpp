// static_model.h: internalise a copy of a compiled model's module and add its entry table.
#include <llvm/IR/Constants.h>
#include <llvm/IR/Module.h>
#include <llvm/Transforms/Utils/Cloning.h>

#include "compiler/base/error.h"
#include "compiler/codegen/executor.h"
#include "compiler/codegen/llvm_passes.h"
#include "compiler/codegen/static_model.h"
#include "kiln/kernel_abi.h"

namespace kiln::codegen {

std::string static_entry_symbol(const std::string& model_name) {
  std::string out = KILN_MODEL_ENTRY_PREFIX;
  for (char c : model_name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    out += ok ? c : '_';
  }
  return out;
}

std::vector<uint8_t> static_model_object(const llvm::Module& optimized,
                                         const std::string& entry_symbol, llvm::TargetMachine& tm) {
  std::unique_ptr<llvm::Module> m = llvm::CloneModule(optimized);
  // Internal, not hidden: hidden symbols of two archives still clash in one static link.
  for (llvm::GlobalValue& g : m->global_values()) {
    if (g.isDeclaration() || g.getName().starts_with("llvm.")) continue;
    g.setLinkage(llvm::GlobalValue::InternalLinkage);
  }
  auto need = [&](llvm::GlobalValue* g, const char* name) -> llvm::Constant* {
    internal_check(g != nullptr) << "the model module has no " << name;
    return g;
  };
  llvm::LLVMContext& ctx = m->getContext();
  llvm::Type* ptr = llvm::PointerType::get(ctx, 0);
  llvm::Type* i32 = llvm::Type::getInt32Ty(ctx);
  // Field for field kiln_model_entry; LLVM pads the u32 to the pointers' alignment as C does.
  auto* type = llvm::StructType::get(ctx, {i32, ptr, ptr, ptr, ptr, ptr});
  llvm::Constant* fields[] = {
      llvm::ConstantInt::get(i32, KILN_ABI_VERSION),
      need(m->getNamedGlobal(KILN_MODULE_TARGET_SYMBOL), KILN_MODULE_TARGET_SYMBOL),
      need(m->getNamedGlobal(KILN_MODEL_INFO_SYMBOL), KILN_MODEL_INFO_SYMBOL),
      need(m->getFunction(KILN_MODULE_INIT_SYMBOL), KILN_MODULE_INIT_SYMBOL),
      need(m->getFunction(KILN_MODEL_RUN_SYMBOL), KILN_MODEL_RUN_SYMBOL),
      need(m->getNamedGlobal(KILN_MODEL_STEP_HOOK_SYMBOL), KILN_MODEL_STEP_HOOK_SYMBOL)};
  auto* entry = new llvm::GlobalVariable(*m, type, true, llvm::GlobalValue::ExternalLinkage,
                                         llvm::ConstantStruct::get(type, fields), entry_symbol);
  internal_check(entry->getName() == entry_symbol)
      << entry_symbol << " clashes with a symbol of the model";
  verify_module(*m, "for static linking");
  return emit_object(*m, tm);
}

}  // namespace kiln::codegen
