// x86-64 answers to ArchHooks: F16C converts halves, AVX512-BF16 (+VL) rounds to bf16 and
// is the bf16 pair dot (vdpbf16ps), and 512-bit vectors need "prefer-vector-width" or LLVM
// splits them on skylake-class CPUs.
#include <llvm/IR/Function.h>

#include "compiler/codegen/arch_hooks.h"

namespace kiln::codegen {
namespace {

class X86Hooks final : public ArchHooks {
 public:
  using ArchHooks::ArchHooks;

  // No AVX512-FP16 target yet: half arithmetic is computed in f32.
  bool native_f16_arith() const override { return false; }
  bool native_f16_convert() const override { return target().has("f16c"); }
  // Without +avx512vl LLVM 19 turns the fptrunc into a call to __truncsfbf2.
  bool native_bf16_convert() const override {
    return target().has("avx512bf16") && target().has("avx512vl");
  }

  void add_function_attributes(llvm::Function& f) const override {
    ArchHooks::add_function_attributes(f);
    if (target().vector_bits >= 512) {
      f.addFnAttr("prefer-vector-width", "512");
      f.addFnAttr("min-legal-vector-width", "512");
    }
  }

  // AVX-512's VRCP14PS is good to 2^-14, so one Newton step reaches f32: three
  // instructions where a 512-bit divide issues once per 10-16 cycles on Intel cores.
  // AVX2's 12-bit RCPPS would need two steps, no faster than Zen's divide.
  std::string reciprocal_estimate(int lanes) const override {
    if (!target().has("avx512f")) return "";
    if (lanes == 16) return "llvm.x86.avx512.rcp14.ps.512";
    if (!target().has("avx512vl")) return "";
    if (lanes == 8) return "llvm.x86.avx512.rcp14.ps.256";
    if (lanes == 4) return "llvm.x86.avx512.rcp14.ps.128";
    return "";
  }

  void check_intrinsic(const std::string& name) const override {
    // The 256-bit byte dot is also AVX-VNNI's (VEX-encoded, on CPUs without AVX-512).
    if (name == "llvm.x86.avx512.vpdpbusd.256" && target().has("avxvnni")) return;
    static const IntrinsicFeature kTable[] = {
        {"avx512bf16", "avx512bf16"},
        {"avx512.vpdpbusd", "avx512vnni"},
        {"avx512.vpdpwssd", "avx512vnni"},
        {"avx512fp16", "avx512fp16"},
        {"avx512.pmaddw", "avx512bw"},
        {"avx512", "avx512f"},
        {"avx2", "avx2"},
        {"fma.", "fma"},
        {"vcvtph2ps", "f16c"},
        {"vcvtps2ph", "f16c"},
        {"tdpbf16ps", "amx-bf16"},
        {"amx", "amx-tile"},
    };
    check_intrinsic_table(name, "llvm.x86.", kTable, std::size(kTable));
  }

  std::span<const TensorIntrinsicForm> tensor_intrinsics() const override {
    using ir::DataType;
    static constexpr TensorIntrinsicForm kForms[] = {
        // vdpbf16ps zmm: per f32 lane, the odd element's product is added first.
        {"pair_dot_bf16", DataType::f32(16), DataType::bf16(32), DataType::bf16(32),
         "llvm.x86.avx512bf16.dpbf16ps.512"},
    };
    return kForms;
  }
};

}  // namespace

std::unique_ptr<ArchHooks> make_x86_hooks(const Target& t) {
  return std::make_unique<X86Hooks>(t);
}

}  // namespace kiln::codegen
