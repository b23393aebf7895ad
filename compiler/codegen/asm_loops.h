// The innermost loops of a kernel's assembly, and what one iteration of each does: its
// multiply-accumulates (by element type), its loads and stores, and its register spills.
// This is the text half of `kiln inspect --analyze`; machine_code_analysis.h hands a loop to
// LLVM's machine-code analyser for the timing half.
//
// A loop is found the way a reader of the listing finds it: a branch back to a block label
// above it. An innermost loop is one that holds no other such branch, so the search needs no
// comments from the assembler and works on AT&T x86 and AArch64 listings alike.
#pragma once

#include <string>
#include <vector>

namespace kiln::codegen {

// A multiply-accumulate instruction class, as counted in a loop: "fmla .4s", "vfmadd231ps
// ymm", "bfmmla", "sdot .4s", "vpdpbusd zmm"; `type` is what the products are made of ("f32",
// "f16", "bf16", "int8", ...), `macs` how many one instruction does.
struct MacKind {
  std::string name, type;
  double macs = 0;
};

// The multiply-accumulate class of one instruction line ("\tfmla\tv0.4s, v1.4s, v2.s[0]"),
// or an empty name when it does none.
MacKind mac_kind_of(const std::string& instruction, bool aarch64);

// What one instruction line does, as the analysis sorts a unit's load by it: a multiply-
// accumulate (mac_kind_of), else a store to memory, a load from it, or anything else.
enum class InstructionRole { Mac, Load, Store, Other };
InstructionRole role_of(const std::string& instruction, bool aarch64);

struct AsmLoop {
  std::string function;                   // the symbol the loop lies in
  std::string label;                      // its header block (".LBB1_4")
  std::vector<std::string> instructions;  // one iteration, labels inside it kept, in order
  MacKind mac;                            // the class doing most of the loop's MACs
  std::string mac_example;                // one instruction of that class, as listed
  int mac_instructions = 0;               // instructions of that class per iteration
  int accumulators = 0;                   // the distinct registers they write
  double macs = 0;                        // their MACs per iteration
  int loads = 0, stores = 0;              // memory operations per iteration
  int spill_loads = 0, spill_stores = 0;  // of those, register spills (verbose listings only)
  // The share of its lines that are multiply-accumulates of its class.
  double mac_density() const {
    return instructions.empty() ? 0 : double(mac_instructions) / double(instructions.size());
  }
};

// The innermost loops of `assembly`, the micro-kernel first: of the loops dense in multiply-
// accumulates, the one with the most accumulators (then the most MACs per iteration). `aarch64`
// picks the syntax (comment character, branch and memory operands). Spills are counted from the
// comments of a verbose listing (CodegenOptions::verbose_assembly).
std::vector<AsmLoop> innermost_loops(const std::string& assembly, bool aarch64);

}  // namespace kiln::codegen
