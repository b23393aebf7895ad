// Private to compiler/codegen. ArchHooks: the few answers that differ between target
// families (which half-precision operations are native, which intrinsics need which
// feature, which LLVM intrinsic implements each kiln tensor intrinsic, extra function
// attributes). The shared LLVM code asks these; codegen_x86.cpp and codegen_aarch64.cpp
// answer them, each with its class private to its file.
#pragma once

#include <memory>
#include <span>
#include <string>

#include "compiler/target/target.h"
#include "compiler/ir/expr.h"

namespace llvm {
class Function;
}

namespace kiln::codegen {

class ArchHooks {
 public:
  explicit ArchHooks(Target t) : target_(std::move(t)) {}
  virtual ~ArchHooks() = default;

  const Target& target() const { return target_; }
  // f16 add/mul/... in half precision (else computed in f32 and rounded back).
  virtual bool native_f16_arith() const = 0;
  // f16 <-> f32 conversion is one instruction (else kiln's integer sequence, never a libcall).
  virtual bool native_f16_convert() const = 0;
  // f32 -> bf16 `fptrunc` selects an instruction (else kiln's integer sequence).
  virtual bool native_bf16_convert() const = 0;
  // The LLVM intrinsic (name, then arguments x, x, all-ones mask) estimating 1/x to 14
  // bits on `lanes` f32 lanes, where one Newton step on it beats a divide; "" elsewhere.
  // Default: none (ARM's FRECPE has 8 bits, and divides are cheap on Zen and Arm cores).
  virtual std::string reciprocal_estimate(int lanes) const {
    (void)lanes;
    return "";
  }
  // target-cpu, target-features and whatever the family adds.
  virtual void add_function_attributes(llvm::Function& f) const;
  // Throws UserError when the LLVM intrinsic `name` needs something the target lacks:
  // selecting it anyway is an LLVM fatal error that would end the whole process.
  virtual void check_intrinsic(const std::string& name) const = 0;
  // The LLVM intrinsic that implements the kiln tensor intrinsic `call`
  // (ir::CallKind::TensorIntrinsic): the row of tensor_intrinsics() with its name and
  // types. UserError when this architecture has none.
  std::string llvm_intrinsic_for(const ir::CallNode& call) const;

 protected:
  // One row of an architecture's table of tensor intrinsics: kiln's name for a target
  // instruction (schedules/intrinsics.h) at one set of types, and the LLVM intrinsic that
  // is that instruction. Every kiln tensor intrinsic accumulates: acc' = name(acc, a, b).
  struct TensorIntrinsicForm {
    const char* kiln_name;
    ir::DataType acc, a, b;
    const char* llvm_name;
  };
  virtual std::span<const TensorIntrinsicForm> tensor_intrinsics() const = 0;

  // A required feature per substring of intrinsic names.
  struct IntrinsicFeature {
    const char* name_part;
    const char* feature;
  };
  // Checks `name` against `table`, and that its "llvm.<arch>." prefix (if any) is ours.
  void check_intrinsic_table(const std::string& name, const char* own_prefix,
                             const IntrinsicFeature* table, size_t n) const;

 private:
  Target target_;
};

std::unique_ptr<ArchHooks> make_x86_hooks(const Target& t);
std::unique_ptr<ArchHooks> make_aarch64_hooks(const Target& t);
// The hooks for t's architecture; UserError for an architecture kiln has no backend for.
std::unique_ptr<ArchHooks> make_arch_hooks(const Target& t);

}  // namespace kiln::codegen
