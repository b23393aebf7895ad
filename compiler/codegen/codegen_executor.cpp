// The model executor (executor.h): plan validation, the kiln_model_info record, and
// kiln_model_run emitted into the kernels' LLVM module through compile_module_with.
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

#include "compiler/codegen/codegen_llvm.h"
#include "compiler/codegen/static_model.h"
#include "compiler/codegen/executor.h"
#include "compiler/codegen/link.h"
#include "compiler/base/error.h"
#include "compiler/ir/functor.h"
#include "compiler/ir/op.h"
#include "kiln/kernel_abi.h"
#include "kiln/params.h"

namespace kiln::codegen {
namespace {

// The dtypes the info record can carry (the runtime's table in runtime/src/model_info.cpp).
const std::set<std::string>& info_dtypes() {
  static const std::set<std::string> kNames = {"f32", "f16", "bf16", "f64", "i8",  "i16",
                                               "i32", "i64", "u8",   "u16", "u32", "bool"};
  return kNames;
}

const char* base_name(ArgBaseKind base) {
  switch (base) {
    case ArgBaseKind::Input:
      return "input";
    case ArgBaseKind::Output:
      return "output";
    case ArgBaseKind::Workspace:
      return "workspace";
    case ArgBaseKind::Params:
      return "params";
  }
  return "?";
}

// The buffers (by data variable) a kernel stores to.
class StoredBuffers : public ir::IRVisitor {
 public:
  using ir::IRVisitor::visit;
  std::set<const ir::VarNode*> stored;

 protected:
  void visit(const ir::StoreNode* op) override {
    stored.insert(op->buffer->data.node());
    ir::IRVisitor::visit(op);
  }
};

// Checks `name` can stand as one field of the info record.
void check_token(const std::string& name, const std::string& what) {
  const bool ok = !name.empty() && std::none_of(name.begin(), name.end(), [](char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\0';
  });
  user_check(ok) << what << " '" << name
                 << "' must be non-empty and free of spaces, tabs and newlines";
}

// Bytes of a kernel buffer when its shape is constant; 0 with `known` false otherwise.
uint64_t buffer_bytes(const ir::Buffer& b, bool* known) {
  uint64_t bytes = static_cast<uint64_t>(b->dtype.bytes()) * b->dtype.lanes;
  for (const ir::Expr& d : b->shape) {
    std::optional<int64_t> v = ir::as_const_int(d);
    if (!v || *v < 0) {
      *known = false;
      return 0;
    }
    bytes *= static_cast<uint64_t>(*v);
  }
  *known = true;
  return bytes;
}

// What one argument of one step covers.
struct Placement {
  ArgBaseKind base;
  int index;
  uint64_t offset;
  uint64_t bytes;  // 0 when unknown
  bool known;
  bool written;
};

class PlanChecker {
 public:
  PlanChecker(const std::vector<ir::LoweredFunc>& kernels, const ExecutorPlan& plan) : plan_(plan) {
    for (const ir::LoweredFunc& k : kernels) kernels_[k.name] = &k;
  }

  void check() {
    check_token(plan_.name, "model name");
    user_check(!plan_.outputs.empty()) << "model '" << plan_.name << "' has no outputs";
    user_check(!plan_.steps.empty()) << "model '" << plan_.name << "' has no steps";
    std::set<std::string> names;
    for (const auto* list : {&plan_.inputs, &plan_.outputs}) {
      const char* kind = list == &plan_.inputs ? "input" : "output";
      for (const TensorSpec& t : *list) {
        check_token(t.name, std::string(kind) + " name");
        user_check(names.insert(t.name).second)
            << kind << " name '" << t.name
            << "' is used twice; inputs and outputs need unique names";
        user_check(t.dtype.is_scalar() && info_dtypes().count(t.dtype.str()))
            << kind << " '" << t.name << "' has dtype " << t.dtype.str()
            << "; a model input or output is one of f32 f16 bf16 f64 i8 i16 i32 i64 u8 u16 u32 "
               "bool";
        for (int64_t d : t.shape)
          user_check(d >= 0) << kind << " '" << t.name << "' has a negative dimension " << d;
      }
    }
    for (const auto& [name, k] : kernels_) {
      user_check(name != KILN_MODEL_RUN_SYMBOL && name != KILN_MODEL_INFO_SYMBOL &&
                 name != KILN_MODEL_STEP_HOOK_SYMBOL)
          << "kernel name '" << name << "' is reserved for the model executor";
    }
    for (size_t s = 0; s < plan_.steps.size(); ++s) check_step(s);
    for (const ExecutorPlan::BatchClass& c : plan_.batch_classes) {
      user_check(c.batch > 1 && !c.steps.empty() && plan_.batch.max > 0)
          << "a batch class of " << c.batch << " samples with " << c.steps.size() << " steps";
      steps_ = &c.steps;
      batch_ = static_cast<uint64_t>(c.batch);
      for (size_t s = 0; s < c.steps.size(); ++s) check_step(s);
    }
  }

 private:
  std::string step_label(size_t s) const {
    return (batch_ > 1 ? "batch class " + std::to_string(batch_) + ", " : std::string()) +
           "step " + std::to_string(s) + " ('" + (*steps_)[s].kernel + "')";
  }

  uint64_t base_size(ArgBaseKind base, int index) const {
    // A batch class reads and writes `batch_` samples of every batched input and every output.
    const std::vector<bool>& batched = plan_.batch.batched_inputs;
    const bool batched_input = static_cast<size_t>(index) < batched.size() && batched[index];
    switch (base) {
      case ArgBaseKind::Input:
        return tensor_bytes(plan_.inputs[index]) * (batched_input ? batch_ : 1);
      case ArgBaseKind::Output:
        return tensor_bytes(plan_.outputs[index]) * batch_;
      case ArgBaseKind::Workspace:
        return plan_.workspace_bytes;
      case ArgBaseKind::Params:
        return plan_.params_bytes;
    }
    return 0;
  }

  void check_step(size_t s) {
    const ExecutorStep& step = (*steps_)[s];
    auto it = kernels_.find(step.kernel);
    if (it == kernels_.end()) {
      std::string have;
      for (const auto& [name, k] : kernels_) have += (have.empty() ? "" : ", ") + name;
      user_error() << step_label(s) << ": no kernel of that name was given (kernels: "
                   << (have.empty() ? "none" : have) << ")";
    }
    const ir::LoweredFunc& k = *it->second;
    user_check(step.args.size() == k.args.size())
        << step_label(s) << ": " << step.args.size() << " arguments, but the kernel takes "
        << k.args.size() << " buffers";
    StoredBuffers stores;
    stores.visit(k.body);

    std::vector<Placement> placed;
    for (size_t a = 0; a < step.args.size(); ++a) {
      const StepArg& arg = step.args[a];
      const ir::Buffer& buffer = k.args[a];
      const std::string where = step_label(s) + ", argument " + std::to_string(a) + " ('" +
                                buffer->name + "', " + base_name(arg.base) + ")";
      if (arg.base == ArgBaseKind::Input || arg.base == ArgBaseKind::Output) {
        const size_t count =
            arg.base == ArgBaseKind::Input ? plan_.inputs.size() : plan_.outputs.size();
        user_check(arg.index >= 0 && static_cast<size_t>(arg.index) < count)
            << where << ": index " << arg.index << " is out of range, the model has " << count
            << " " << base_name(arg.base) << "(s)";
      }
      const uint64_t element = static_cast<uint64_t>(buffer->dtype.bytes());
      user_check(element == 0 || arg.offset % element == 0)
          << where << ": offset " << arg.offset << " is not a multiple of the " << element
          << "-byte element size";
      bool known = false;
      const uint64_t bytes = buffer_bytes(buffer, &known);
      const uint64_t size = base_size(arg.base, arg.index);
      user_check(arg.offset <= size && (!known || bytes <= size - arg.offset))
          << where << ": bytes [" << arg.offset << ", "
          << (known ? std::to_string(arg.offset + bytes) : std::string("?"))
          << ") run past the end of the " << base_name(arg.base) << " (" << size << " bytes)";
      const bool written = stores.stored.count(buffer->data.node()) > 0;
      user_check(!written || arg.base != ArgBaseKind::Params)
          << where << ": the kernel writes this buffer, but the params are read-only";
      user_check(!written || arg.base != ArgBaseKind::Input)
          << where << ": the kernel writes this buffer, but model inputs belong to the caller";
      placed.push_back({arg.base, arg.index, arg.offset, bytes, known, written});
    }
    // Kernels take their buffers as noalias pointers: two arguments may share bytes only when
    // neither is written.
    for (size_t a = 0; a < placed.size(); ++a) {
      for (size_t b = a + 1; b < placed.size(); ++b) {
        const Placement& x = placed[a];
        const Placement& y = placed[b];
        if (x.base != y.base || x.index != y.index || !x.known || !y.known) continue;
        if (!x.written && !y.written) continue;
        const bool overlap = x.bytes > 0 && y.bytes > 0 && x.offset < y.offset + y.bytes &&
                             y.offset < x.offset + x.bytes;
        user_check(!overlap) << step_label(s) << ": arguments " << a << " and " << b
                             << " overlap in the " << base_name(x.base) << " (bytes [" << x.offset
                             << ", " << x.offset + x.bytes << ") and [" << y.offset << ", "
                             << y.offset + y.bytes
                             << ")), and one is written; kernels assume their buffers do not alias";
      }
    }
  }

  const ExecutorPlan& plan_;
  std::map<std::string, const ir::LoweredFunc*> kernels_;
  const std::vector<ExecutorStep>* steps_ = &plan_.steps;  // the program being checked
  uint64_t batch_ = 1;                                     // and the samples it runs
};

std::string hex64(uint64_t v) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(v));
  return text;
}

void append_tensor(std::string& out, const char* key, const TensorSpec& t) {
  // Appended piece by piece: GCC 12 warns falsely (-Wrestrict) about chained operator+ here.
  for (const std::string& field :
       {std::string(key), t.name, t.dtype.str(), std::to_string(t.shape.size())}) {
    out += field;
    out += ' ';
  }
  for (int64_t d : t.shape) {
    out += std::to_string(d);
    out += ' ';
  }
  out.back() = '\n';
}

// Steps per executor function. Small kernels are inlined into the function that calls them,
// and LLVM's instruction scheduling grows faster than linearly in a function's size: an
// unrolled LSTM of 1,500 steps took 3 minutes to compile as one function. Parts of at most
// this many steps keep every function small; one call per part costs nothing at run time.
constexpr size_t kStepsPerPart = 64;

// Emits the body of `fn` (inputs, outputs, workspace, params) -> status: steps [begin, end)
// of the plan, returning the first non-zero status, calling the hook (when set) after each: the
// profiler's timer, or the runtime's params check, which stops the run by a non-zero status.
void emit_steps(llvm::Function* fn, const ExecutorPlan& plan,
                const std::vector<ExecutorStep>& steps, size_t begin, size_t end,
                llvm::GlobalVariable* hook) {
  llvm::Module& module = *fn->getParent();
  llvm::LLVMContext& ctx = module.getContext();
  llvm::IRBuilder<> b(ctx);
  llvm::Type* ptr = b.getPtrTy();
  auto* hook_ty = llvm::FunctionType::get(b.getInt32Ty(), {b.getInt32Ty()}, false);
  llvm::BasicBlock* entry = llvm::BasicBlock::Create(ctx, "entry", fn);
  llvm::BasicBlock* failed = llvm::BasicBlock::Create(ctx, "failed", fn);
  b.SetInsertPoint(failed);
  llvm::PHINode* status =
      b.CreatePHI(b.getInt32Ty(), static_cast<unsigned>(2 * (end - begin)), "status");
  b.CreateRet(status);

  b.SetInsertPoint(entry);
  size_t max_args = 1;
  for (size_t s = begin; s < end; ++s) max_args = std::max(max_args, steps[s].args.size());
  llvm::AllocaInst* args = b.CreateAlloca(llvm::ArrayType::get(ptr, max_args), nullptr, "args");
  // Each model input/output pointer the steps use is loaded once, up front.
  std::map<std::pair<ArgBaseKind, int>, llvm::Value*> io_pointers;
  for (size_t s = begin; s < end; ++s) {
    for (const StepArg& a : steps[s].args) {
      if (a.base != ArgBaseKind::Input && a.base != ArgBaseKind::Output) continue;
      llvm::Value*& p = io_pointers[{a.base, a.index}];
      if (p) continue;
      const bool input = a.base == ArgBaseKind::Input;
      const TensorSpec& spec = input ? plan.inputs[a.index] : plan.outputs[a.index];
      p = b.CreateLoad(ptr, b.CreateConstInBoundsGEP1_64(ptr, fn->getArg(input ? 0 : 1), a.index),
                       spec.name);
    }
  }
  auto base_pointer = [&](const StepArg& a) -> llvm::Value* {
    if (a.base == ArgBaseKind::Workspace) return fn->getArg(2);
    if (a.base == ArgBaseKind::Params) return fn->getArg(3);
    return io_pointers.at({a.base, a.index});
  };

  for (size_t s = begin; s < end; ++s) {
    const ExecutorStep& step = steps[s];
    for (size_t a = 0; a < step.args.size(); ++a) {
      llvm::Value* p = b.CreateConstInBoundsGEP1_64(b.getInt8Ty(), base_pointer(step.args[a]),
                                                    step.args[a].offset);
      b.CreateStore(p, b.CreateConstInBoundsGEP1_64(ptr, args, a));
    }
    llvm::Function* kernel = module.getFunction(step.kernel);
    internal_check(kernel != nullptr) << "kernel " << step.kernel << " not in the module";
    llvm::Value* result = b.CreateCall(kernel, {args}, "status");
    llvm::BasicBlock* next = llvm::BasicBlock::Create(ctx, "next_step", fn, failed);
    status->addIncoming(result, b.GetInsertBlock());
    b.CreateCondBr(b.CreateICmpNE(result, b.getInt32(0)), failed, next);
    b.SetInsertPoint(next);
    // Volatile: the profiler and the runtime set the hook between runs, so it is read at every
    // step.
    llvm::LoadInst* h = b.CreateLoad(ptr, hook, "hook");
    h->setVolatile(true);
    llvm::BasicBlock* call_hook = llvm::BasicBlock::Create(ctx, "call_hook", fn, failed);
    llvm::BasicBlock* after_hook = llvm::BasicBlock::Create(ctx, "after_hook", fn, failed);
    b.CreateCondBr(b.CreateIsNull(h), after_hook, call_hook);
    b.SetInsertPoint(call_hook);
    llvm::Value* hook_status = b.CreateCall(hook_ty, h, {b.getInt32(static_cast<int32_t>(s))});
    status->addIncoming(hook_status, b.GetInsertBlock());
    b.CreateCondBr(b.CreateICmpNE(hook_status, b.getInt32(0)), failed, after_hook);
    b.SetInsertPoint(after_hook);
  }
  b.CreateRet(b.getInt32(0));
}

// kiln_model_run and kiln_model_info, into a module that already holds the plan's kernels.
void add_executor(llvm::Module& module, const ExecutorPlan& plan) {
  llvm::LLVMContext& ctx = module.getContext();
  llvm::IRBuilder<> b(ctx);
  llvm::Type* ptr = b.getPtrTy();

  llvm::Constant* text = llvm::ConstantDataArray::getString(ctx, model_info_text(plan), true);
  auto* info =
      new llvm::GlobalVariable(module, text->getType(), true, llvm::GlobalValue::ExternalLinkage,
                               text, KILN_MODEL_INFO_SYMBOL);
  info->setVisibility(llvm::GlobalValue::DefaultVisibility);

  // The profiler's hook (kernel_abi.h): a null function pointer the profiler may overwrite.
  auto* hook = new llvm::GlobalVariable(module, ptr, false, llvm::GlobalValue::ExternalLinkage,
                                        llvm::ConstantPointerNull::get(b.getPtrTy()),
                                        KILN_MODEL_STEP_HOOK_SYMBOL);
  hook->setVisibility(llvm::GlobalValue::DefaultVisibility);

  auto* fty = llvm::FunctionType::get(b.getInt32Ty(), {ptr, ptr, ptr, ptr}, false);
  llvm::Function* run = llvm::Function::Create(fty, llvm::GlobalValue::ExternalLinkage,
                                               KILN_MODEL_RUN_SYMBOL, module);
  internal_check(run->getName() == KILN_MODEL_RUN_SYMBOL) << "kiln_model_run defined twice";
  run->setVisibility(llvm::GlobalValue::DefaultVisibility);
  // The kernels' own attributes (target CPU and features): the inliner only merges functions
  // whose targets agree, and small kernels are worth inlining into the executor.
  llvm::Function* first = module.getFunction(plan.steps.front().kernel);
  internal_check(first != nullptr)
      << "kernel " << plan.steps.front().kernel << " not in the module";
  const llvm::AttributeSet kernel_attrs = first->getAttributes().getFnAttrs();
  auto set_attributes = [&](llvm::Function* fn) {
    fn->addFnAttrs(llvm::AttrBuilder(ctx, kernel_attrs));
    fn->addFnAttr(llvm::Attribute::NoUnwind);
    const char* arg_names[] = {"inputs", "outputs", "workspace", "params"};
    for (unsigned i = 0; i < 4; ++i) fn->getArg(i)->setName(arg_names[i]);
    // The runtime hands both arenas 64-byte aligned (kernel_abi.h): offsets that are multiples
    // of 64 then give the kernels aligned vectors, and LLVM may use that.
    for (unsigned i : {2u, 3u})
      fn->addParamAttr(i, llvm::Attribute::getWithAlignment(ctx, llvm::Align(64)));
  };
  // A call of `callee` with fn's own arguments, returning its status.
  auto forward = [&](llvm::Function* fn, llvm::Function* callee) {
    std::vector<llvm::Value*> call_args;
    for (unsigned i = 0; i < 4; ++i) call_args.push_back(fn->getArg(i));
    return b.CreateCall(callee, call_args, "status");
  };
  // One program's steps into `fn`: in place when few, else in parts that `fn` calls in order
  // (they stay functions of their own: noinline).
  auto emit_program = [&](llvm::Function* fn, const std::vector<ExecutorStep>& steps) {
    set_attributes(fn);
    if (steps.size() <= kStepsPerPart) {
      emit_steps(fn, plan, steps, 0, steps.size(), hook);
      return;
    }
    llvm::BasicBlock* body = llvm::BasicBlock::Create(ctx, "entry", fn);
    llvm::BasicBlock* failed = llvm::BasicBlock::Create(ctx, "failed", fn);
    b.SetInsertPoint(failed);
    const size_t parts = (steps.size() + kStepsPerPart - 1) / kStepsPerPart;
    llvm::PHINode* status = b.CreatePHI(b.getInt32Ty(), static_cast<unsigned>(parts), "status");
    b.CreateRet(status);
    b.SetInsertPoint(body);
    for (size_t begin = 0; begin < steps.size(); begin += kStepsPerPart) {
      llvm::Function* part = llvm::Function::Create(
          fty, llvm::GlobalValue::InternalLinkage,
          fn->getName() + ".part" + std::to_string(begin / kStepsPerPart), module);
      set_attributes(part);
      part->addFnAttr(llvm::Attribute::NoInline);
      emit_steps(part, plan, steps, begin, std::min(steps.size(), begin + kStepsPerPart), hook);
      b.SetInsertPoint(body);
      llvm::Value* result = forward(fn, part);
      body = llvm::BasicBlock::Create(ctx, "next_part", fn, failed);
      status->addIncoming(result, b.GetInsertBlock());
      b.CreateCondBr(b.CreateICmpNE(result, b.getInt32(0)), failed, body);
    }
    b.SetInsertPoint(body);
    b.CreateRet(b.getInt32(0));
  };
  if (plan.batch_classes.empty()) {
    emit_program(run, plan.steps);
    return;
  }
  // Batch classes: a program each, and kiln_model_run picks one by the integer the runtime
  // stores in the pointer slot after the last input (executor.h).
  std::vector<llvm::Function*> programs;
  for (size_t c = 0; c <= plan.batch_classes.size(); ++c) {
    const int64_t batch = c == 0 ? 1 : plan.batch_classes[c - 1].batch;
    programs.push_back(llvm::Function::Create(
        fty, llvm::GlobalValue::InternalLinkage,
        std::string(KILN_MODEL_RUN_SYMBOL) + ".batch" + std::to_string(batch), module));
    emit_program(programs.back(), c == 0 ? plan.steps : plan.batch_classes[c - 1].steps);
  }
  set_attributes(run);
  llvm::BasicBlock* entry = llvm::BasicBlock::Create(ctx, "entry", run);
  llvm::BasicBlock* unknown = llvm::BasicBlock::Create(ctx, "unknown_class", run);
  b.SetInsertPoint(entry);
  llvm::Value* slot = b.CreateLoad(
      ptr, b.CreateConstInBoundsGEP1_64(ptr, run->getArg(0), plan.inputs.size()), "class_slot");
  llvm::SwitchInst* pick = b.CreateSwitch(b.CreatePtrToInt(slot, b.getInt64Ty()), unknown,
                                          static_cast<unsigned>(programs.size()));
  for (size_t c = 0; c < programs.size(); ++c) {
    llvm::BasicBlock* call = llvm::BasicBlock::Create(ctx, "class" + std::to_string(c), run);
    pick->addCase(b.getInt64(c), call);
    b.SetInsertPoint(call);
    b.CreateRet(forward(run, programs[c]));
  }
  b.SetInsertPoint(unknown);
  b.CreateRet(b.getInt32(KILN_STATUS_UNKNOWN_BATCH_CLASS));
}

}  // namespace

uint64_t tensor_bytes(const TensorSpec& t) {
  uint64_t n = static_cast<uint64_t>(t.dtype.bytes());
  for (int64_t d : t.shape) n *= static_cast<uint64_t>(std::max<int64_t>(d, 0));
  return n;
}

void validate_plan(const std::vector<ir::LoweredFunc>& kernels, const ExecutorPlan& plan) {
  PlanChecker(kernels, plan).check();
}

std::vector<ParamsCheckPoint> params_check_schedule(const ExecutorPlan& plan) {
  // A params argument at offset o holds at most the bytes up to the next offset any step
  // reads (the payload is the tensors laid end to end), or to the payload's end.
  std::set<uint64_t> offsets;
  for (const ExecutorStep& step : plan.steps)
    for (const StepArg& a : step.args)
      if (a.base == ArgBaseKind::Params) offsets.insert(a.offset);
  auto end_of = [&](uint64_t offset) {
    auto next = offsets.upper_bound(offset);
    return next == offsets.end() ? plan.params_bytes : std::min(*next, plan.params_bytes);
  };
  std::vector<ParamsCheckPoint> schedule;
  uint64_t chunks = 0;
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    uint64_t needed = chunks;
    for (const StepArg& a : plan.steps[s].args) {
      if (a.base != ArgBaseKind::Params) continue;
      needed = std::max(needed, params_chunk_count(end_of(a.offset)));
    }
    if (needed > chunks) schedule.push_back({s, chunks = needed});
  }
  return schedule;
}

std::string model_info_text(const ExecutorPlan& plan) {
  std::string out = "kiln-model " + std::to_string(KILN_MODEL_INFO_VERSION) + "\n";
  out += "name " + plan.name + "\n";
  out += "workspace " + std::to_string(plan.workspace_bytes) + "\n";
  out += "params " + std::to_string(plan.params_bytes) + " " + hex64(plan.params_checksum) + "\n";
  // The points name steps of one program; with several, every chunk is checked before the first
  // run (the runtime's rule for a record without points).
  const std::vector<ParamsCheckPoint> schedule =
      plan.batch_classes.empty() ? params_check_schedule(plan) : std::vector<ParamsCheckPoint>{};
  if (!schedule.empty()) {
    out += "verify";
    for (const ParamsCheckPoint& p : schedule)
      out += " " + std::to_string(p.step) + " " + std::to_string(p.chunks);
    out += "\n";
  }
  if (plan.batch.max > 0) {
    out += "batch " + std::to_string(plan.batch.min) + " " + std::to_string(plan.batch.max) + " ";
    for (size_t i = 0; i < plan.inputs.size(); ++i)
      out += i < plan.batch.batched_inputs.size() && plan.batch.batched_inputs[i] ? '1' : '0';
    for (const ExecutorPlan::BatchClass& c : plan.batch_classes)
      out += " " + std::to_string(c.batch);
    if (plan.batch.pad && !plan.batch_classes.empty()) out += " pad";
    out += "\n";
  }
  for (const TensorSpec& t : plan.inputs) append_tensor(out, "input", t);
  for (const TensorSpec& t : plan.outputs) append_tensor(out, "output", t);
  return out;
}

CompiledModule compile_model(const std::vector<ir::LoweredFunc>& kernels, const ExecutorPlan& plan,
                             const Target& target, const CodegenOptions& options,
                             std::vector<uint8_t>* static_object) {
  validate_plan(kernels, plan);
  OptimizedModuleHook derive_static;
  if (static_object) {
    derive_static = [&](const llvm::Module& module, llvm::TargetMachine& tm) {
      *static_object = static_model_object(module, static_entry_symbol(plan.name), tm);
    };
  }
  return compile_module_with(
      kernels, target, options, [&](llvm::Module& module) { add_executor(module, plan); },
      derive_static);
}

CompiledModule build_model(const std::vector<ir::LoweredFunc>& kernels, const ExecutorPlan& plan,
                           const Target& target, const std::string& out_path,
                           const CodegenOptions& options) {
  CompiledModule m = compile_model(kernels, plan, target, options);
  link_shared_object({m.object}, out_path);
  return m;
}

}  // namespace kiln::codegen
