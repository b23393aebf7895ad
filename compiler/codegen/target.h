// Target: what kiln generates code for, as plain data (triple, CPU, feature list, vector
// width), never as #ifdefs. Presets name the machines kiln supports ("x86-avx512",
// "arm-bf16", ...); "host" describes the machine the compiler runs on. Codegen asks a Target
// which instructions it may use; the tuner asks it how many lanes a vector has.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "ir/type.h"

namespace kiln::codegen {

struct Target {
  std::string name;    // the preset name, or "host"
  std::string triple;  // "x86_64-unknown-linux-gnu", "aarch64-unknown-linux-gnu"
  std::string cpu;     // LLVM CPU name: "haswell", "skylake-avx512", "generic"
  // LLVM feature strings: "+avx2" enables, "-avx512f" disables (only "host" lists those).
  std::vector<std::string> features;
  int vector_bits = 128;  // the widest vector register the kernels should use

  // True when `feature` ("avx512bf16" or "+avx512bf16") is enabled.
  bool has(std::string_view feature) const;
  bool is_x86() const;
  bool is_aarch64() const;
  // Lanes of a full vector register of `t`'s element type (vector_bits / bits).
  int lanes(ir::DataType t) const;
  // The features joined with commas, as LLVM's TargetMachine wants them.
  std::string feature_string() const;
};

// A preset by name, or "host". Throws UserError naming the valid names otherwise.
Target target_from_name(const std::string& name);
// The preset names, "host" included.
std::vector<std::string> target_preset_names();
// The machine this process runs on (what "host" means).
Target host_target();
// True when code for `t` runs in this process: same architecture, and the host CPU has
// every feature `t` enables.
bool host_can_run(const Target& t);

}  // namespace kiln::codegen
