// Kernel quality without the board: the innermost loops of a kernel's assembly (asm_loops.h)
// run through LLVM's machine-code analyser, llvm-mca, with the scheduling model of the
// target's CPU. For each loop: the predicted cycles per iteration, the multiply-accumulates
// per cycle against the core's peak for the same instruction (measured the same way, on a
// block of independent copies of it), and what holds the loop back: register spills,
// dependency chains, a busy unit or the dispatch width.
//
// These are predictions of one model of the core (no caches, no memory system beyond the
// load units, no branch mispredictions): good for comparing configs and templates on a core,
// and for telling whether a micro-kernel is in the right range, not a replacement for a
// measurement on the board.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "compiler/codegen/asm_loops.h"
#include "compiler/target/target.h"

namespace kiln::codegen {

struct LoopPrediction {
  AsmLoop loop;
  double cycles = 0;          // per iteration, in steady state
  double resource_bound = 0;  // the cycles per iteration its busiest unit needs
  double uops_per_cycle = 0;
  int dispatch_width = 0;
  // Every unit the loop uses with its busy cycles per iteration, busiest first; a unit's
  // name as the model spells it ("A57UnitW", "Zn3FPU0").
  std::vector<std::pair<std::string, double>> units;
  double peak_macs_per_cycle = 0;  // the core's, for the loop's MAC class (0: none or unknown)
  std::string bottleneck;          // what holds it back, one sentence

  double macs_per_cycle() const { return cycles > 0 ? loop.macs / cycles : 0; }
  // Achieved MACs per cycle over the peak (0 when either is unknown).
  double of_peak() const;
};

struct MachineCodeAnalysis {
  std::string cpu;                    // the scheduling model's CPU ("cortex-a72")
  std::vector<LoopPrediction> loops;  // the innermost loops, the micro-kernel first
};

// Analyses the `max_loops` innermost loops of `assembly` (code for `target`) with the model
// of target's CPU ("host": this machine's). Throws UserError when llvm-mca cannot be found
// or rejects the code, naming what to install or set.
MachineCodeAnalysis analyze_assembly(const std::string& assembly, const Target& target,
                                     size_t max_loops = 3);

// The core's multiply-accumulates per cycle for the instruction class of `example` (one
// instruction of it, as listed), on `target`'s model: llvm-mca on a block of independent
// copies. 0 when the model cannot time it.
double peak_macs_per_cycle(const std::string& example, const Target& target);

// The CPU whose scheduling model llvm-mca times `target` with: its own, or the one its profile
// names where LLVM has none of its own (CpuProfile::model_cpu).
std::string scheduling_model_cpu(const Target& target);

// UserError naming what to install when llvm-mca cannot time code for `target`.
void check_llvm_mca(const Target& target);

// The llvm-mca program used: $KILN_LLVM_MCA, else the one found when kiln was configured,
// else "llvm-mca-19" on PATH.
std::string llvm_mca_program();

}  // namespace kiln::codegen
