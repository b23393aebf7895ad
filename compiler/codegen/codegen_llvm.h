// Private to compiler/codegen. CodeGenLLVM turns lowered kernels into LLVM IR functions in
// one llvm::Module. Its implementation is split by concern:
//   codegen_expr.cpp     expressions (arithmetic, casts, calls)
//   codegen_memory.cpp   loads, stores and allocations
//   codegen_stmt.cpp     statements and loops
//   codegen_half.cpp     f16/bf16 conversions that never become library calls
//   codegen_runtime.cpp  the kernel ABI: entry points, kiln_module_init, parallel_for
//   codegen_amx.cpp      Intel AMX tile GEMMs (the amx_gemm_bf16 tensor intrinsic)
// (codegen_executor.cpp, the model executor, needs only the module: see compile_module_with.)
#pragma once

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "compiler/codegen/arch_hooks.h"
#include "compiler/codegen/codegen.h"
#include "compiler/ir/lowered_func.h"

namespace llvm {
class TargetMachine;
}

namespace kiln::codegen {

// compile_module with a hook that adds to the module after the kernels and before
// optimisation (codegen_executor.cpp adds the model's executor with it), and one that sees the
// optimised module before its object is emitted (codegen_static_model.cpp derives the object
// of model.a from it, so the optimisation pipeline runs once for both).
using ModuleExtension = std::function<void(llvm::Module&)>;
using OptimizedModuleHook = std::function<void(const llvm::Module&, llvm::TargetMachine&)>;
CompiledModule compile_module_with(const std::vector<ir::LoweredFunc>& funcs, const Target& target,
                                   const CodegenOptions& options, const ModuleExtension& extend,
                                   const OptimizedModuleHook& optimized = {});

class CodeGenLLVM {
 public:
  CodeGenLLVM(llvm::Module& module, const ArchHooks& hooks);

  // `kiln_module_target`: the target's name, architecture and the CPU features its code needs
  // (kernel_abi.h), so the runtime can refuse a CPU that lacks them. Call once per module.
  void add_target_record(const Target& requested);
  // The api global and `kiln_module_init`; call once per module.
  void add_module_init();
  // `int32_t NAME(void* const* args)` and its always-inline body.
  void add_kernel(const ir::LoweredFunc& func);

 private:
  // What belongs to the function being emitted; swapped out while a parallel loop body is
  // outlined into its own function.
  struct FunctionState {
    llvm::Function* function = nullptr;
    std::unordered_map<const ir::VarNode*, llvm::Value*> vars;  // incl. buffer pointers
    std::vector<llvm::Value*> workspaces;  // live Global allocations, freed on early return
    bool in_parallel = false;              // inside an outlined parallel body
  };

  // --- types (codegen_expr.cpp)
  llvm::Type* llvm_type(ir::DataType t);
  // How an element is stored in memory: bool is a byte, everything else itself.
  llvm::Type* memory_type(ir::DataType element);
  llvm::Type* with_lanes(llvm::Type* scalar, int lanes);
  llvm::Value* const_i64(int64_t v);
  llvm::Value* const_i32(int32_t v);

  // --- expressions (codegen_expr.cpp)
  llvm::Value* emit(const ir::Expr& e);
  llvm::Value* emit_binary(const ir::BinaryNode* op);
  llvm::Value* emit_float_binary(ir::ExprKind kind, ir::DataType t, llvm::Value* a, llvm::Value* b);
  llvm::Value* emit_int_binary(ir::ExprKind kind, ir::DataType t, llvm::Value* a, llvm::Value* b,
                               const ir::Expr& rhs);
  llvm::Value* emit_compare(ir::ExprKind kind, ir::DataType t, llvm::Value* a, llvm::Value* b);
  llvm::Value* emit_cast(llvm::Value* v, ir::DataType from, ir::DataType to);
  llvm::Value* emit_call(const ir::CallNode* op);
  llvm::Value* emit_range_check(const ir::CallNode* op);
  llvm::Value* emit_fast_reciprocal(const ir::CallNode* op);
  llvm::Value* emit_pure_call(const ir::CallNode* op);
  llvm::Value* emit_ramp(const ir::RampNode* op);
  llvm::Value* lookup_var(const ir::VarNode* v);

  // --- half precision (codegen_half.cpp)
  // True when arithmetic on t is done in f32 and rounded back.
  bool widens(ir::DataType t) const;
  llvm::Value* float_convert(llvm::Value* v, ir::DataType from, ir::DataType to);
  llvm::Value* half_to_f32(llvm::Value* v, ir::DataType from);
  llvm::Value* f32_to_half(llvm::Value* v, ir::DataType to);
  llvm::Value* f32_to_bf16_soft(llvm::Value* v, int lanes);
  llvm::Value* f32_to_f16_soft(llvm::Value* v, int lanes);
  llvm::Value* f16_to_f32_soft(llvm::Value* v, int lanes);
  llvm::Value* f64_to_f32_round_odd(llvm::Value* v, int lanes);

  // --- memory (codegen_memory.cpp)
  llvm::Value* emit_load(const ir::LoadNode* op);
  void emit_store(const ir::StoreNode* op);
  void emit_allocate(const ir::AllocateNode* op);
  // "address_of"(Load): the address of the load's first element (a handle).
  llvm::Value* emit_address_of(const ir::CallNode* op);
  llvm::Value* buffer_pointer(const ir::Buffer& b);
  llvm::AllocaInst* entry_alloca(llvm::Type* t, llvm::Value* count, const std::string& name);

  // --- statements (codegen_stmt.cpp)
  void emit(const ir::Stmt& s);
  void emit_for(const ir::ForNode* op);
  // A counted loop over [begin, end) binding `var`; `body` emits one iteration.
  void emit_serial_loop(const ir::Var& var, llvm::Value* begin, llvm::Value* end, bool unroll,
                        const ir::Stmt& body);
  void emit_if(const ir::IfThenElseNode* op);

  // --- Intel AMX (codegen_amx.cpp)
  llvm::Value* emit_amx_gemm_bf16(const ir::CallNode* op);
  // Asks the OS once per process for the tile data state; returns status -2 if refused.
  void emit_amx_permission();

  // --- runtime ABI (codegen_runtime.cpp)
  void emit_parallel_for(const ir::ForNode* op);
  // Frees live workspaces and returns `status` from the current function; later code goes
  // to a fresh (unreachable) block.
  void emit_return_status(llvm::Value* status);
  // Emits `if (status != 0) return status;`.
  void emit_check_status(llvm::Value* status);
  llvm::Value* load_api();
  llvm::Value* api_field_address(llvm::Value* api, int index);
  llvm::Value* api_field(llvm::Value* api, int index, const char* name);
  llvm::Function* make_function(const std::string& name, llvm::FunctionType* type, bool exported);
  llvm::BasicBlock* new_block(const std::string& name);

  llvm::Module& module_;
  llvm::LLVMContext& ctx_;
  const ArchHooks& hooks_;
  llvm::IRBuilder<> b_;
  llvm::GlobalVariable* api_global_ = nullptr;
  llvm::StructType* api_type_ = nullptr;
  FunctionState fn_;
};

// Binds an IR variable for the lifetime of the guard (Let, LetStmt, loop variables).
class ScopedBinding {
 public:
  ScopedBinding(std::unordered_map<const ir::VarNode*, llvm::Value*>& map, const ir::VarNode* v,
                llvm::Value* value)
      : map_(map), var_(v) {
    auto it = map_.find(v);
    if (it != map_.end()) had_ = true, old_ = it->second;
    map_[v] = value;
  }
  ~ScopedBinding() {
    if (had_) {
      map_[var_] = old_;
    } else {
      map_.erase(var_);
    }
  }
  ScopedBinding(const ScopedBinding&) = delete;
  ScopedBinding& operator=(const ScopedBinding&) = delete;

 private:
  std::unordered_map<const ir::VarNode*, llvm::Value*>& map_;
  const ir::VarNode* var_;
  bool had_ = false;
  llvm::Value* old_ = nullptr;
};

}  // namespace kiln::codegen
