// AArch64 answers to ArchHooks: half arithmetic is native with +fullfp16 (armv8.2-a), half
// conversions always are, bf16 conversions and BFMMLA/BFDOT (kiln's mmla_bf16 and
// pair_dot_bf16) need +bf16 (armv8.6-a).
#include "compiler/codegen/arch_hooks.h"

namespace kiln::codegen {
namespace {

class AArch64Hooks final : public ArchHooks {
 public:
  using ArchHooks::ArchHooks;

  bool native_f16_arith() const override { return target().has("fullfp16"); }
  bool native_f16_convert() const override { return true; }  // FCVT is in ARMv8.0
  bool native_bf16_convert() const override { return target().has("bf16"); }

  void check_intrinsic(const std::string& name) const override {
    static const IntrinsicFeature kTable[] = {
        {"bfmmla", "bf16"},  {"bfdot", "bf16"},   {"bfmlal", "bf16"},   {"bfcvt", "bf16"},
        {"smmla", "i8mm"},   {"ummla", "i8mm"},   {"usmmla", "i8mm"},   {"usdot", "i8mm"},
        {"sdot", "dotprod"}, {"udot", "dotprod"}, {"fp16", "fullfp16"}, {"sve", "sve"},
    };
    check_intrinsic_table(name, "llvm.aarch64.", kTable, std::size(kTable));
  }

  std::span<const TensorIntrinsicForm> tensor_intrinsics() const override {
    using ir::DataType;
    static constexpr TensorIntrinsicForm kForms[] = {
        // bfdot v.4s, v.8h, v.8h
        {"pair_dot_bf16", DataType::f32(4), DataType::bf16(8), DataType::bf16(8),
         "llvm.aarch64.neon.bfdot.v4f32.v8bf16"},
        // bfmmla v.4s, v.8h, v.8h: a 2x2 f32 tile += (2x4) x (2x4)^T
        {"mmla_bf16", DataType::f32(4), DataType::bf16(8), DataType::bf16(8),
         "llvm.aarch64.neon.bfmmla"},
    };
    return kForms;
  }
};

}  // namespace

std::unique_ptr<ArchHooks> make_aarch64_hooks(const Target& t) {
  return std::make_unique<AArch64Hooks>(t);
}

}  // namespace kiln::codegen
