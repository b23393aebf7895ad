// AArch64 answers to ArchHooks: half arithmetic is native with +fullfp16 (armv8.2-a), half
// conversions always are, bf16 conversions and BFMMLA/BFDOT need +bf16 (armv8.6-a).
#include "codegen/arch_hooks.h"

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
};

}  // namespace

std::unique_ptr<ArchHooks> make_aarch64_hooks(const Target& t) {
  return std::make_unique<AArch64Hooks>(t);
}

}  // namespace kiln::codegen
