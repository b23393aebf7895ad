#include "compiler/codegen/llvm_passes.h"

#include <llvm/Analysis/TargetLibraryInfo.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Verifier.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/TargetParser/Host.h>
#include <llvm/TargetParser/Triple.h>

#include <algorithm>
#include <mutex>

#include "compiler/base/error.h"
#include "compiler/codegen/bf16_moves_as_bits.h"
#include "compiler/codegen/lane_broadcasts.h"

extern "C" {
void LLVMInitializeX86TargetInfo();
void LLVMInitializeX86Target();
void LLVMInitializeX86TargetMC();
void LLVMInitializeX86AsmPrinter();
void LLVMInitializeX86AsmParser();
void LLVMInitializeAArch64TargetInfo();
void LLVMInitializeAArch64Target();
void LLVMInitializeAArch64TargetMC();
void LLVMInitializeAArch64AsmPrinter();
}

namespace kiln::codegen {
namespace {

// Nothing a kernel calls may come from a library: kernels link against nothing.
llvm::TargetLibraryInfoImpl no_library(const llvm::Module& m) {
  llvm::TargetLibraryInfoImpl tlii{llvm::Triple(m.getTargetTriple())};
  tlii.disableAllFunctions();
  return tlii;
}

llvm::CodeGenOptLevel codegen_level(int opt_level) {
  switch (opt_level) {
    case 0:
      return llvm::CodeGenOptLevel::None;
    case 1:
      return llvm::CodeGenOptLevel::Less;
    case 2:
      return llvm::CodeGenOptLevel::Default;
    default:
      return llvm::CodeGenOptLevel::Aggressive;
  }
}

std::vector<char> emit(llvm::Module& m, llvm::TargetMachine& tm, llvm::CodeGenFileType kind) {
  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream os(buffer);
  llvm::legacy::PassManager pm;
  pm.add(new llvm::TargetLibraryInfoWrapperPass(no_library(m)));
  internal_check(!tm.addPassesToEmitFile(pm, os, nullptr, kind))
      << "LLVM cannot emit this file type for " << tm.getTargetTriple().str();
  pm.run(m);
  return {buffer.begin(), buffer.end()};
}

// x86 without AVX512-FP16 has no half arithmetic. InstCombine still narrows an exact f32
// compare-and-select of widened halves (relu, clamp, min/max) to half, and the backend
// lowers a scalar half max to a call of fmaxf, which a kernel cannot link. Compares and
// selects of scalar halves are widened back to f32 here (exact: f16 -> f32 is lossless).
void widen_scalar_half_compares(llvm::Module& m) {
  std::vector<llvm::Instruction*> work;
  for (llvm::Function& f : m)
    for (llvm::BasicBlock& bb : f)
      for (llvm::Instruction& i : bb) {
        if (llvm::isa<llvm::SelectInst>(i) && i.getType()->isHalfTy()) work.push_back(&i);
        if (llvm::isa<llvm::FCmpInst>(i) && i.getOperand(0)->getType()->isHalfTy())
          work.push_back(&i);
      }
  for (llvm::Instruction* i : work) {
    llvm::IRBuilder<> b(i);
    auto wide = [&](llvm::Value* v) { return b.CreateFPExt(v, b.getFloatTy()); };
    llvm::Value* r = nullptr;
    if (auto* s = llvm::dyn_cast<llvm::SelectInst>(i)) {
      r = b.CreateFPTrunc(
          b.CreateSelect(s->getCondition(), wide(s->getTrueValue()), wide(s->getFalseValue())),
          i->getType());
    } else {
      auto* c = llvm::cast<llvm::FCmpInst>(i);
      r = b.CreateFCmp(c->getPredicate(), wide(c->getOperand(0)), wide(c->getOperand(1)));
    }
    i->replaceAllUsesWith(r);
    i->eraseFromParent();
  }
}

}  // namespace

void initialize_llvm_targets() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeX86TargetInfo();
    LLVMInitializeX86Target();
    LLVMInitializeX86TargetMC();
    LLVMInitializeX86AsmPrinter();
    // Object emission parses inline assembly (the AMX permission syscall, codegen_amx.cpp).
    LLVMInitializeX86AsmParser();
    LLVMInitializeAArch64TargetInfo();
    LLVMInitializeAArch64Target();
    LLVMInitializeAArch64TargetMC();
    LLVMInitializeAArch64AsmPrinter();
  });
}

Target llvm_target(const Target& target) {
  if (target.cpu != "host") return target;
  Target t = target;
  t.cpu = llvm::sys::getHostCPUName().str();
  // Both the enabled and the disabled features: the CPU name alone would switch on features
  // a virtual machine may hide from us.
  t.features.clear();
  for (const auto& f : llvm::sys::getHostCPUFeatures()) {
    std::string entry(1, f.getValue() ? '+' : '-');
    entry += f.getKey();
    t.features.push_back(std::move(entry));
  }
  std::sort(t.features.begin(), t.features.end());
  return t;
}

std::unique_ptr<llvm::TargetMachine> make_target_machine(const Target& target, int opt_level) {
  initialize_llvm_targets();
  std::string error;
  const llvm::Target* t = llvm::TargetRegistry::lookupTarget(target.triple, error);
  user_check(t != nullptr) << "target " << target.name << ": LLVM has no backend for triple "
                           << target.triple << " (" << error << ")";
  llvm::TargetOptions options;
  std::unique_ptr<llvm::TargetMachine> tm(
      t->createTargetMachine(target.triple, target.cpu, target.feature_string(), options,
                             llvm::Reloc::PIC_, llvm::CodeModel::Small, codegen_level(opt_level)));
  internal_check(tm != nullptr) << "LLVM could not create a target machine for " << target.name;
  return tm;
}

void verify_module(const llvm::Module& m, const char* when) {
  std::string message;
  llvm::raw_string_ostream os(message);
  if (llvm::verifyModule(m, &os)) internal_error() << "invalid LLVM IR " << when << ": " << message;
}

void optimize_module(llvm::Module& m, llvm::TargetMachine& tm, int opt_level) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PipelineTuningOptions tuning;
  tuning.LoopVectorization = opt_level >= 2;
  tuning.SLPVectorization = opt_level >= 2;
  llvm::PassBuilder pb(&tm, tuning);
  // Registered first so that PassBuilder's default TargetLibraryAnalysis does not replace it.
  llvm::TargetLibraryInfoImpl tlii = no_library(m);
  fam.registerPass([&] { return llvm::TargetLibraryAnalysis(tlii); });
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager mpm;
  switch (opt_level) {
    case 0:
      mpm = pb.buildO0DefaultPipeline(llvm::OptimizationLevel::O0);
      break;
    case 1:
      mpm = pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O1);
      break;
    case 2:
      mpm = pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O2);
      break;
    default:
      mpm = pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
      break;
  }
  mpm.run(m, mam);
  if (tm.getTargetTriple().isX86() && !tm.getTargetFeatureString().contains("+avx512fp16"))
    widen_scalar_half_compares(m);
  // Broadcasts of neighbouring f16 values (or bf16 pairs, int8 quads) become lanes of one load
  // (`fmla .8h`, `bfdot`, `sdot` by element) rather than an `ld1r` each, which shares the
  // multiply-accumulates' vector pipe.
  if (tm.getTargetTriple().isAArch64() && opt_level >= 2) broadcast_loads_by_lane(m);
  // Without vcvtneps2bf16 the backend rounds the bfloat values a kernel only moves (phis,
  // selects, shuffles, masked stores) through a library call: they move as 16-bit integers.
  const llvm::StringRef features = tm.getTargetFeatureString();
  if (tm.getTargetTriple().isX86() &&
      !(features.contains("+avx512bf16") && features.contains("+avx512vl")))
    move_bf16_as_bits(m);
}

std::vector<uint8_t> emit_object(llvm::Module& m, llvm::TargetMachine& tm) {
  std::vector<char> bytes = emit(m, tm, llvm::CodeGenFileType::ObjectFile);
  return {bytes.begin(), bytes.end()};
}

std::string emit_assembly(llvm::Module& m, llvm::TargetMachine& tm, bool verbose) {
  tm.Options.MCOptions.AsmVerbose = verbose;
  std::vector<char> text = emit(m, tm, llvm::CodeGenFileType::AssemblyFile);
  return {text.begin(), text.end()};
}

}  // namespace kiln::codegen
