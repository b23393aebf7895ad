// The kernel ABI of runtime/include/kiln/kernel_abi.h, on the generated side: exported entry
// points, `kiln_module_init`, workspace early exits, and parallel loops outlined into
// closures for the runtime's `parallel_for`.
#include <set>

#include "compiler/codegen/codegen_llvm.h"
#include "kiln/kernel_abi.h"
#include "compiler/base/error.h"
#include "compiler/ir/functor.h"

namespace kiln::codegen {

namespace {

constexpr uint32_t kAbiVersion = KILN_ABI_VERSION;

// Field indices of kiln_runtime_api.
enum ApiField { kAbiVersionField = 0, kParallelFor = 1, kAllocWorkspace = 2, kFreeWorkspace = 3 };

// Every variable (buffer pointers included) a statement reads, in order of first use.
class UsedVars : public ir::IRVisitor {
 public:
  using ir::IRVisitor::visit;
  std::vector<const ir::VarNode*> order;

 protected:
  void add(const ir::VarNode* v) {
    if (seen_.insert(v).second) order.push_back(v);
  }
  void visit(const ir::VarNode* op) override { add(op); }
  void visit(const ir::LoadNode* op) override {
    add(op->buffer->data.node());
    ir::IRVisitor::visit(op);
  }
  void visit(const ir::StoreNode* op) override {
    add(op->buffer->data.node());
    ir::IRVisitor::visit(op);
  }
  void visit(const ir::AllocateNode* op) override {
    for (const ir::Expr& d : op->buffer->shape) visit(d);
    ir::IRVisitor::visit(op);
  }

 private:
  std::set<const ir::VarNode*> seen_;
};

}  // namespace

CodeGenLLVM::CodeGenLLVM(llvm::Module& module, const ArchHooks& hooks)
    : module_(module), ctx_(module.getContext()), hooks_(hooks), b_(ctx_) {
  llvm::Type* ptr = b_.getPtrTy();
  api_type_ = llvm::StructType::create(ctx_, {b_.getInt32Ty(), ptr, ptr, ptr}, "kiln_runtime_api");
}

llvm::Function* CodeGenLLVM::make_function(const std::string& name, llvm::FunctionType* type,
                                           bool exported) {
  auto linkage = exported ? llvm::GlobalValue::ExternalLinkage : llvm::GlobalValue::InternalLinkage;
  llvm::Function* f = llvm::Function::Create(type, linkage, name, module_);
  internal_check(f->getName() == name) << "function " << name << " defined twice";
  hooks_.add_function_attributes(*f);
  f->addFnAttr(llvm::Attribute::NoUnwind);
  if (exported) f->setVisibility(llvm::GlobalValue::DefaultVisibility);
  return f;
}

void CodeGenLLVM::add_target_record(const Target& requested) {
  std::string line = "target=" + requested.name +
                     ";arch=" + (requested.is_aarch64() ? "aarch64" : "x86_64") + ";features=";
  std::vector<std::string> needs = requested.required_cpu_features();
  for (size_t i = 0; i < needs.size(); ++i) line += (i ? "," : "") + needs[i];
  llvm::Constant* text = llvm::ConstantDataArray::getString(module_.getContext(), line, true);
  auto* g = new llvm::GlobalVariable(module_, text->getType(), true,
                                     llvm::GlobalValue::ExternalLinkage, text,
                                     KILN_MODULE_TARGET_SYMBOL);
  g->setVisibility(llvm::GlobalValue::DefaultVisibility);
}

void CodeGenLLVM::add_module_init() {
  api_global_ =
      new llvm::GlobalVariable(module_, b_.getPtrTy(), false, llvm::GlobalValue::InternalLinkage,
                               llvm::ConstantPointerNull::get(b_.getPtrTy()), "kiln_api");
  auto* fty = llvm::FunctionType::get(b_.getInt32Ty(), {b_.getPtrTy()}, false);
  llvm::Function* f = make_function("kiln_module_init", fty, true);
  fn_ = FunctionState{f, {}, {}, false};
  b_.SetInsertPoint(new_block("entry"));
  llvm::Value* api = f->getArg(0);
  llvm::BasicBlock* check = new_block("check_version");
  llvm::BasicBlock* store = new_block("store");
  llvm::BasicBlock* bad = new_block("bad_version");
  b_.CreateCondBr(b_.CreateIsNull(api), store, check);
  b_.SetInsertPoint(check);
  llvm::Value* version = b_.CreateLoad(b_.getInt32Ty(), api_field_address(api, kAbiVersionField));
  b_.CreateCondBr(b_.CreateICmpEQ(version, b_.getInt32(kAbiVersion)), store, bad);
  b_.SetInsertPoint(bad);
  b_.CreateRet(const_i32(-1));  // a runtime speaking another ABI version
  b_.SetInsertPoint(store);
  b_.CreateStore(api, api_global_);
  b_.CreateRet(const_i32(0));
  fn_ = FunctionState{};
}

void CodeGenLLVM::add_kernel(const ir::LoweredFunc& func) {
  user_check(!func.name.empty() && func.name != "kiln_module_init" &&
             module_.getFunction(func.name) == nullptr)
      << "kernel name '" << func.name << "' is empty, reserved or used twice";
  internal_check(api_global_ != nullptr) << "add_module_init must come before kernels";
  llvm::Type* ptr = b_.getPtrTy();
  // The body takes each buffer as a `noalias` pointer: kernel arguments never overlap, and
  // after inlining LLVM keeps that as scoped alias metadata, which the vectoriser needs.
  std::vector<llvm::Type*> params(func.args.size(), ptr);
  llvm::Function* body = make_function(
      func.name + ".body", llvm::FunctionType::get(b_.getInt32Ty(), params, false), false);
  body->addFnAttr(llvm::Attribute::AlwaysInline);
  for (size_t i = 0; i < func.args.size(); ++i) {
    body->addParamAttr(i, llvm::Attribute::NoAlias);
    body->getArg(i)->setName(func.args[i]->name);
  }

  fn_ = FunctionState{body, {}, {}, false};
  b_.SetInsertPoint(new_block("entry"));
  for (size_t i = 0; i < func.args.size(); ++i)
    fn_.vars[func.args[i]->data.node()] = body->getArg(i);
  emit(func.body);
  b_.CreateRet(const_i32(0));

  auto* kty = llvm::FunctionType::get(b_.getInt32Ty(), {ptr}, false);
  llvm::Function* kernel = make_function(func.name, kty, true);
  fn_ = FunctionState{kernel, {}, {}, false};
  b_.SetInsertPoint(new_block("entry"));
  std::vector<llvm::Value*> args;
  for (size_t i = 0; i < func.args.size(); ++i) {
    llvm::Value* slot = b_.CreateConstInBoundsGEP1_64(ptr, kernel->getArg(0), i);
    args.push_back(b_.CreateLoad(ptr, slot, func.args[i]->name));
  }
  b_.CreateRet(b_.CreateCall(body, args));
  fn_ = FunctionState{};
}

llvm::Value* CodeGenLLVM::load_api() {
  return b_.CreateLoad(b_.getPtrTy(), api_global_, "api");
}

llvm::Value* CodeGenLLVM::api_field_address(llvm::Value* api, int index) {
  return b_.CreateStructGEP(api_type_, api, index);
}

llvm::Value* CodeGenLLVM::api_field(llvm::Value* api, int index, const char* name) {
  return b_.CreateLoad(b_.getPtrTy(), api_field_address(api, index), name);
}

void CodeGenLLVM::emit_return_status(llvm::Value* status) {
  if (!fn_.workspaces.empty()) {
    llvm::Value* api = load_api();
    auto* free_ty = llvm::FunctionType::get(b_.getVoidTy(), {b_.getPtrTy()}, false);
    for (auto it = fn_.workspaces.rbegin(); it != fn_.workspaces.rend(); ++it)
      b_.CreateCall(free_ty, api_field(api, kFreeWorkspace, "free_workspace"), {*it});
  }
  b_.CreateRet(status);
}

void CodeGenLLVM::emit_check_status(llvm::Value* status) {
  llvm::BasicBlock* failed = new_block("failed");
  llvm::BasicBlock* ok = new_block("ok");
  b_.CreateCondBr(b_.CreateICmpNE(status, const_i32(0)), failed, ok);
  b_.SetInsertPoint(failed);
  emit_return_status(status);
  b_.SetInsertPoint(ok);
}

void CodeGenLLVM::emit_parallel_for(const ir::ForNode* op) {
  // What the body needs from outside: every variable it reads that is bound here.
  UsedVars used;
  used.visit(op->body);
  std::vector<const ir::VarNode*> captured;
  for (const ir::VarNode* v : used.order)
    if (fn_.vars.count(v)) captured.push_back(v);

  llvm::Value* min = emit(op->min);
  llvm::Value* extent = emit(op->extent);
  std::vector<llvm::Type*> field_types{b_.getInt64Ty()};
  for (const ir::VarNode* v : captured) field_types.push_back(lookup_var(v)->getType());
  llvm::StructType* closure_ty = llvm::StructType::get(ctx_, field_types);
  llvm::AllocaInst* closure = entry_alloca(closure_ty, nullptr, op->var.name() + ".closure");
  b_.CreateStore(min, b_.CreateStructGEP(closure_ty, closure, 0));
  for (size_t i = 0; i < captured.size(); ++i)
    b_.CreateStore(lookup_var(captured[i]), b_.CreateStructGEP(closure_ty, closure, i + 1));

  // The body: (begin, end, min, captured...), with buffers as noalias pointers like a
  // kernel body, always inlined into the task function the runtime calls.
  std::vector<llvm::Type*> body_params{b_.getInt64Ty(), b_.getInt64Ty()};
  body_params.insert(body_params.end(), field_types.begin(), field_types.end());
  std::string base_name = fn_.function->getName().str() + "." + op->var.name() + ".par";
  // Two parallel loops of one kernel may have the same variable name (two stages with the
  // same fused axes): number the later ones.
  for (int i = 2; module_.getFunction(base_name + ".body"); ++i)
    base_name = fn_.function->getName().str() + "." + op->var.name() + ".par" + std::to_string(i);
  llvm::Function* body = make_function(
      base_name + ".body", llvm::FunctionType::get(b_.getInt32Ty(), body_params, false), false);
  body->addFnAttr(llvm::Attribute::AlwaysInline);
  for (size_t i = 0; i < captured.size(); ++i) {
    body->getArg(i + 3)->setName(captured[i]->name);
    if (field_types[i + 1]->isPointerTy()) body->addParamAttr(i + 3, llvm::Attribute::NoAlias);
  }

  llvm::BasicBlock* saved_block = b_.GetInsertBlock();
  FunctionState saved = std::move(fn_);
  fn_ = FunctionState{body, {}, {}, true};
  b_.SetInsertPoint(new_block("entry"));
  for (size_t i = 0; i < captured.size(); ++i) fn_.vars[captured[i]] = body->getArg(i + 3);
  llvm::Value* task_min = body->getArg(2);
  emit_serial_loop(op->var, b_.CreateAdd(task_min, body->getArg(0), "", false, true),
                   b_.CreateAdd(task_min, body->getArg(1), "", false, true), false, op->body);
  b_.CreateRet(const_i32(0));

  // The task: kiln_parallel_body's signature; unpacks the closure.
  llvm::Type* i64 = b_.getInt64Ty();
  auto* task_ty = llvm::FunctionType::get(b_.getInt32Ty(), {i64, i64, b_.getPtrTy()}, false);
  llvm::Function* task = make_function(base_name, task_ty, false);
  // Called from two places (the pool and the inline fallback): keep one copy of the body.
  task->addFnAttr(llvm::Attribute::NoInline);
  fn_ = FunctionState{task, {}, {}, true};
  b_.SetInsertPoint(new_block("entry"));
  std::vector<llvm::Value*> args{task->getArg(0), task->getArg(1)};
  for (size_t i = 0; i < field_types.size(); ++i)
    args.push_back(
        b_.CreateLoad(field_types[i], b_.CreateStructGEP(closure_ty, task->getArg(2), i)));
  b_.CreateRet(b_.CreateCall(body, args));

  fn_ = std::move(saved);
  b_.SetInsertPoint(saved_block);

  // Through the runtime's pool; on the calling thread when no runtime was given.
  llvm::Value* api = load_api();
  llvm::BasicBlock* pool = new_block("parallel_pool");
  llvm::BasicBlock* inline_bb = new_block("parallel_inline");
  llvm::BasicBlock* done = new_block("parallel_done");
  b_.CreateCondBr(b_.CreateIsNull(api), inline_bb, pool);
  b_.SetInsertPoint(pool);
  auto* pfor_ty =
      llvm::FunctionType::get(b_.getInt32Ty(), {i64, b_.getPtrTy(), b_.getPtrTy()}, false);
  llvm::Value* pool_status =
      b_.CreateCall(pfor_ty, api_field(api, kParallelFor, "parallel_for"), {extent, task, closure});
  b_.CreateBr(done);
  b_.SetInsertPoint(inline_bb);
  llvm::Value* inline_status = b_.CreateCall(task, {const_i64(0), extent, closure});
  b_.CreateBr(done);
  b_.SetInsertPoint(done);
  llvm::PHINode* status = b_.CreatePHI(b_.getInt32Ty(), 2, "status");
  status->addIncoming(pool_status, pool);
  status->addIncoming(inline_status, inline_bb);
  emit_check_status(status);
}

}  // namespace kiln::codegen
