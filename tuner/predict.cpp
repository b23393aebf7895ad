#include "tuner/predict.h"

#include "compiler/base/error.h"
#include "compiler/target/profiles.h"
#include "cost_model/loop_tree.h"

namespace kiln::tuner {

double executed_macs(const BuiltKernel& k) {
  const double flops = cost_model::build_loop_tree(k.func).totals.flops;
  return (flops >= 0.1 * k.flops ? flops : k.flops) / 2;
}

double prediction_ghz(const Target& t) {
  const CpuProfile* p = find_cpu_profile(t.name);
  return p && p->ghz > 0 ? p->ghz : 1.0;
}

KernelPrediction predict_kernel(const BuiltKernel& k, const Target& t) {
  KernelPrediction p;
  p.macs = executed_macs(k);
  codegen::MachineCodeAnalysis a;
  try {
    a = analyze_kernel(k.func, t);
  } catch (const UserError& e) {
    // llvm-mca missing is the user's to fix, and the same for every kernel: stop.
    if (std::string(e.what()).find("llvm-mca") != std::string::npos) throw;
    p.why_not = e.what();
    return p;
  }
  if (a.loops.empty() || a.loops[0].loop.macs <= 0 || a.loops[0].cycles <= 0) {
    p.why_not = "no multiply-accumulate loop";
    return p;
  }
  p.main = a.loops[0];
  p.model = a.cpu;
  for (size_t i = 1; i < a.loops.size(); ++i)
    p.other_loop_spills |= a.loops[i].loop.spill_loads + a.loops[i].loop.spill_stores > 0;
  p.cycles = p.macs / p.main.macs_per_cycle();
  return p;
}

}  // namespace kiln::tuner
