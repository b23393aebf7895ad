// A kernel's time predicted rather than measured: its micro-kernel through llvm-mca with the
// target CPU's scheduling model (compiler/codegen/machine_code_analysis.h), that loop's
// multiply-accumulates per cycle applied to every multiply-add the kernel executes. What
// `kiln analyze` sums over a network and `kiln tune --runner analyze` ranks candidates by for
// a board nobody has at hand.
//
// A lower bound by construction (packing, remainder loops and memory stalls run at the
// micro-kernel's rate here), from one model of the core (no caches): good for comparing the
// configs of one task on one core, and labelled as predicted wherever it is shown or stored.
#pragma once

#include <string>

#include "compiler/codegen/machine_code_analysis.h"
#include "tuner/builder.h"

namespace kiln::tuner {

struct KernelPrediction {
  double macs = 0;                 // multiply-adds one call executes
  double cycles = 0;               // predicted per call; 0 when not predicted
  codegen::LoopPrediction main;    // the micro-kernel (the first loop of the analysis)
  bool other_loop_spills = false;  // a loop besides the micro-kernel spills registers
  std::string model;               // the scheduling model's CPU
  std::string why_not;             // when not predicted: no multiply-accumulate loop, ...
  bool predicted() const { return cycles > 0; }
};

// Throws UserError only when llvm-mca itself cannot run (the same for every kernel); a kernel
// that cannot be predicted comes back with `why_not`.
KernelPrediction predict_kernel(const BuiltKernel& k, const Target& t);

// The multiply-adds a call of `k` executes, counted on its lowered loops (so Winograd's
// smaller product counts as what it is, 1/4 to 1/5 of the direct convolution's); the
// template's own count where the loops show under a tenth of it: their products are
// intrinsics the loop count does not see (bf16 and int8 dot products).
double executed_macs(const BuiltKernel& k);

// The clock `kiln analyze` and the predicted tune turn cycles into time with: the profile's
// (compiler/target/profiles.h), else 1 GHz for a target without one (a preset, host): the
// predicted records then rank configs, their times only nominal.
double prediction_ghz(const Target& t);

}  // namespace kiln::tuner
