// Loads, stores and allocations. A flat index is a scalar (one element), a Ramp of stride
// 1 (one vector access), a Broadcast (one element, splatted) or any other vector of i64
// (gather/scatter, which LLVM scalarises where the target has none).
#include "compiler/codegen/codegen_llvm.h"
#include "compiler/base/error.h"
#include "compiler/ir/op.h"
#include "compiler/ir/printer.h"

namespace kiln::codegen {

using ir::DataType;

namespace {
const ir::Expr& flat_index(const std::vector<ir::Expr>& indices, const std::string& buffer) {
  internal_check(indices.size() == 1) << "access to " << buffer << " has " << indices.size()
                                      << " indices; codegen needs flattened buffers";
  return indices[0];
}
bool is_dense_ramp(const ir::Expr& index) {
  const auto* r = index.as<ir::RampNode>();
  return r && ir::is_one(r->stride);
}
}  // namespace

llvm::Value* CodeGenLLVM::buffer_pointer(const ir::Buffer& b) {
  return lookup_var(b->data.node());
}

llvm::AllocaInst* CodeGenLLVM::entry_alloca(llvm::Type* t, llvm::Value* count,
                                            const std::string& name) {
  // In the entry block, allocas are static: one stack slot for the function, not one per
  // loop iteration.
  llvm::BasicBlock& entry = fn_.function->getEntryBlock();
  llvm::IRBuilder<> eb(&entry, entry.getFirstInsertionPt());
  return eb.CreateAlloca(t, count, name);
}

llvm::Value* CodeGenLLVM::emit_address_of(const ir::CallNode* op) {
  const auto* load = op->args.size() == 1 ? op->args[0].as<ir::LoadNode>() : nullptr;
  internal_check(load != nullptr && !load->predicate.defined())
      << "address_of takes one unpredicated load";
  const ir::Expr& index = flat_index(load->indices, load->buffer->name);
  const auto* ramp = index.as<ir::RampNode>();
  llvm::Value* first = emit(ramp ? ramp->base : index);
  internal_check(first->getType()->isIntegerTy()) << "address_of a vector index";
  return b_.CreateInBoundsGEP(memory_type(load->buffer->dtype), buffer_pointer(load->buffer), first);
}

llvm::Value* CodeGenLLVM::emit_load(const ir::LoadNode* op) {
  const ir::Expr& index = flat_index(op->indices, op->buffer->name);
  DataType elem = op->buffer->dtype;
  int lanes = op->type.lanes;
  llvm::Type* mt = memory_type(elem);
  llvm::Type* vt = with_lanes(mt, lanes);
  llvm::Align align(elem.bytes());
  llvm::Value* base = buffer_pointer(op->buffer);
  llvm::Value* pred = op->predicate.defined() ? emit(op->predicate) : nullptr;
  llvm::Value* v = nullptr;

  if (index.type().is_scalar()) {
    llvm::Value* addr = b_.CreateInBoundsGEP(mt, base, emit(index));
    if (!pred) {
      v = b_.CreateAlignedLoad(mt, addr, align);
    } else {
      // A guarded scalar load: read only when the predicate holds.
      llvm::BasicBlock* from = b_.GetInsertBlock();
      llvm::BasicBlock* yes = new_block("pred_load");
      llvm::BasicBlock* done = new_block("pred_load_done");
      b_.CreateCondBr(pred, yes, done);
      b_.SetInsertPoint(yes);
      llvm::Value* loaded = b_.CreateAlignedLoad(mt, addr, align);
      b_.CreateBr(done);
      b_.SetInsertPoint(done);
      auto* phi = b_.CreatePHI(mt, 2);
      phi->addIncoming(llvm::PoisonValue::get(mt), from);
      phi->addIncoming(loaded, yes);
      v = phi;
    }
  } else if (is_dense_ramp(index)) {
    llvm::Value* addr = b_.CreateInBoundsGEP(mt, base, emit(index.as<ir::RampNode>()->base));
    if (pred) {
      v = b_.CreateMaskedLoad(vt, addr, align, pred, llvm::PoisonValue::get(vt));
    } else {
      v = b_.CreateAlignedLoad(vt, addr, align);
    }
  } else if (const auto* bc = index.as<ir::BroadcastNode>(); bc && !pred) {
    llvm::Value* addr = b_.CreateInBoundsGEP(mt, base, emit(bc->value));
    v = b_.CreateVectorSplat(lanes, b_.CreateAlignedLoad(mt, addr, align));
  } else {
    llvm::Value* addrs = b_.CreateInBoundsGEP(mt, base, emit(index));
    v = b_.CreateMaskedGather(vt, addrs, align, pred);
  }
  if (elem.is_bool()) v = b_.CreateTrunc(v, llvm_type(op->type));
  return v;
}

void CodeGenLLVM::emit_store(const ir::StoreNode* op) {
  const ir::Expr& index = flat_index(op->indices, op->buffer->name);
  DataType elem = op->buffer->dtype;
  int lanes = op->value.type().lanes;
  llvm::Type* mt = memory_type(elem);
  llvm::Align align(elem.bytes());
  llvm::Value* base = buffer_pointer(op->buffer);
  llvm::Value* value = emit(op->value);
  if (elem.is_bool()) value = b_.CreateZExt(value, with_lanes(mt, lanes));
  llvm::Value* pred = op->predicate.defined() ? emit(op->predicate) : nullptr;

  if (index.type().is_scalar()) {
    internal_check(lanes == 1) << "store of a vector at a scalar index into " << op->buffer->name;
    llvm::Value* addr = b_.CreateInBoundsGEP(mt, base, emit(index));
    if (!pred) {
      b_.CreateAlignedStore(value, addr, align);
      return;
    }
    llvm::BasicBlock* yes = new_block("pred_store");
    llvm::BasicBlock* done = new_block("pred_store_done");
    b_.CreateCondBr(pred, yes, done);
    b_.SetInsertPoint(yes);
    b_.CreateAlignedStore(value, addr, align);
    b_.CreateBr(done);
    b_.SetInsertPoint(done);
    return;
  }
  if (value->getType()->isVectorTy() == false)
    value = b_.CreateVectorSplat(index.type().lanes, value);
  if (is_dense_ramp(index)) {
    llvm::Value* addr = b_.CreateInBoundsGEP(mt, base, emit(index.as<ir::RampNode>()->base));
    if (pred) {
      b_.CreateMaskedStore(value, addr, align, pred);
    } else {
      b_.CreateAlignedStore(value, addr, align);
    }
    return;
  }
  // Scatter, lanes in order, so that with repeated addresses the last lane wins.
  llvm::Value* addrs = b_.CreateInBoundsGEP(mt, base, emit(index));
  b_.CreateMaskedScatter(value, addrs, align, pred);
}

void CodeGenLLVM::emit_allocate(const ir::AllocateNode* op) {
  const ir::Buffer& buf = op->buffer;
  llvm::Type* mt = memory_type(buf->dtype);
  if (buf->scope == ir::MemScope::Local) {
    int64_t count = 1;
    for (const ir::Expr& dim : buf->shape) {
      auto c = ir::as_const_int(dim);
      user_check(c.has_value()) << "local buffer " << buf->name
                                << " needs a constant size to live on the stack, but "
                                << "its shape has " << dim
                                << "; use a global (workspace) buffer instead";
      count *= *c;
    }
    user_check(count >= 0) << "local buffer " << buf->name << " has negative size " << count;
    llvm::AllocaInst* a = entry_alloca(mt, const_i64(std::max<int64_t>(count, 1)), buf->name);
    a->setAlignment(llvm::Align(64));  // full vectors never straddle a cache line
    ScopedBinding bind(fn_.vars, buf->data.node(), a);
    emit(op->body);
    return;
  }

  // Global: workspace from the runtime, freed when the body is done (or on an early exit).
  llvm::Value* count = const_i64(1);
  for (const ir::Expr& dim : buf->shape) {
    llvm::Value* d = emit_cast(emit(dim), dim.type(), DataType::i64());
    count = b_.CreateMul(count, d, "", false, true);
  }
  llvm::Value* bytes = b_.CreateMul(count, const_i64(buf->dtype.bytes()));
  bytes = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, bytes, const_i64(1));
  llvm::Value* api = load_api();
  llvm::BasicBlock* no_api = new_block("no_api");
  llvm::BasicBlock* have_api = new_block("have_api");
  b_.CreateCondBr(b_.CreateIsNull(api), no_api, have_api);
  b_.SetInsertPoint(no_api);
  emit_return_status(const_i32(-1));  // nobody called kiln_module_init
  b_.SetInsertPoint(have_api);
  auto* alloc_ty = llvm::FunctionType::get(b_.getPtrTy(), {b_.getInt64Ty()}, false);
  llvm::CallInst* ptr =
      b_.CreateCall(alloc_ty, api_field(api, 2, "alloc_workspace"), {bytes}, buf->name);
  // Fresh memory, 64-byte aligned by the ABI: tell the optimiser both.
  ptr->addRetAttr(llvm::Attribute::NoAlias);
  ptr->addRetAttr(llvm::Attribute::getWithAlignment(ctx_, llvm::Align(64)));
  llvm::BasicBlock* failed = new_block("alloc_failed");
  llvm::BasicBlock* ok = new_block("alloc_ok");
  b_.CreateCondBr(b_.CreateIsNull(ptr), failed, ok);
  b_.SetInsertPoint(failed);
  emit_return_status(const_i32(-1));  // out of memory
  b_.SetInsertPoint(ok);

  fn_.workspaces.push_back(ptr);
  {
    ScopedBinding bind(fn_.vars, buf->data.node(), ptr);
    emit(op->body);
  }
  fn_.workspaces.pop_back();
  auto* free_ty = llvm::FunctionType::get(b_.getVoidTy(), {b_.getPtrTy()}, false);
  b_.CreateCall(free_ty, api_field(load_api(), 3, "free_workspace"), {ptr});
}

}  // namespace kiln::codegen
