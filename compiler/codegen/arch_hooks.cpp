#include "compiler/codegen/arch_hooks.h"

#include <llvm/IR/Function.h>

#include "compiler/base/error.h"

namespace kiln::codegen {

void ArchHooks::add_function_attributes(llvm::Function& f) const {
  f.addFnAttr("target-cpu", target_.cpu);
  f.addFnAttr("target-features", target_.feature_string());
}

void ArchHooks::check_intrinsic_table(const std::string& name, const char* own_prefix,
                                      const IntrinsicFeature* table, size_t n) const {
  for (const char* arch : {"llvm.x86.", "llvm.aarch64.", "llvm.arm."}) {
    if (name.rfind(arch, 0) == 0 && std::string(arch) != own_prefix)
      user_error() << "intrinsic " << name << " is for another architecture than target "
                   << target_.name << " (" << target_.triple << ")";
  }
  for (size_t i = 0; i < n; ++i) {
    if (name.find(table[i].name_part) == std::string::npos) continue;
    user_check(target_.has(table[i].feature))
        << "intrinsic " << name << " needs target feature " << table[i].feature << ", which target "
        << target_.name << " does not have";
  }
}

std::string ArchHooks::llvm_intrinsic_for(const ir::CallNode& call) const {
  auto signature = [](ir::DataType acc, ir::DataType a, ir::DataType b) {
    return "(" + acc.str() + ", " + a.str() + ", " + b.str() + ")";
  };
  std::string given = "(";
  for (const ir::Expr& e : call.args) given += (given.size() > 1 ? ", " : "") + e.type().str();
  given += ")";
  std::string forms;
  for (const TensorIntrinsicForm& f : tensor_intrinsics()) {
    if (call.name != f.kiln_name) continue;
    if (call.args.size() == 3 && call.type == f.acc && call.args[0].type() == f.acc &&
        call.args[1].type() == f.a && call.args[2].type() == f.b)
      return f.llvm_name;
    forms += (forms.empty() ? "" : ", ") + signature(f.acc, f.a, f.b);
  }
  user_check(!forms.empty()) << "tensor intrinsic '" << call.name << "' has no instruction on "
                             << target_.name << " (" << target_.triple << ")";
  user_error() << "tensor intrinsic '" << call.name << "' on " << target_.name << " takes " << forms
               << ", not " << given;
  return "";
}

std::unique_ptr<ArchHooks> make_arch_hooks(const Target& t) {
  if (t.is_x86()) return make_x86_hooks(t);
  if (t.is_aarch64()) return make_aarch64_hooks(t);
  user_error() << "target " << t.name << " has triple " << t.triple
               << "; kiln generates code for x86_64 and aarch64 only";
  return nullptr;
}

}  // namespace kiln::codegen
