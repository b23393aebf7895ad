// Target: what kiln generates code for, as plain data (triple, CPU, feature list, vector
// width), never as #ifdefs. Presets name the machines kiln supports ("x86-avx512",
// "arm-bf16", ...); "host" describes the machine the compiler runs on. Schedules ask a
// Target which instructions they may use and how many lanes a vector has; codegen maps it
// to LLVM (compiler/codegen); the runtime checks a kernel's recorded features against the
// CPU with the same feature names (runtime/include/kiln/cpu_features.h).
//
// This library has no LLVM in it: it is what schedules, the tuner and the CLI see.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "compiler/ir/type.h"

namespace kiln {

struct Target {
  std::string name;    // the preset name, or "host"
  std::string triple;  // "x86_64-unknown-linux-gnu", "aarch64-unknown-linux-gnu"
  // LLVM CPU name: "haswell", "skylake-avx512", "generic"; "host" is resolved by codegen to
  // this machine's CPU and its complete feature list.
  std::string cpu;
  // LLVM feature names: "+avx2" enables, "-avx512f" disables.
  std::vector<std::string> features;
  int vector_bits = 128;  // the widest vector register the kernels should use
  // Data caches per core (L2 per cluster where cores share one), which fallback rules size
  // their tiles by. A preset names a typical core of its kind; a profile its own; `host`
  // reads this machine's.
  int l1d_kib = 32, l2_kib = 1024;

  // True when `feature` ("avx512bf16" or "+avx512bf16") is enabled.
  bool has(std::string_view feature) const;
  bool is_x86() const;
  bool is_aarch64() const;
  // Lanes of a full vector register of `t`'s element type (vector_bits / bits).
  int lanes(ir::DataType t) const;
  // The features joined with commas, as LLVM's TargetMachine wants them.
  std::string feature_string() const;
  // The enabled features without their '+' (what a kernel needs of the CPU), e.g.
  // {"avx512f", "avx512bw", ...}; architecture versions such as "v8.2a" are left out.
  std::vector<std::string> required_cpu_features() const;
};

// A preset by name, "host", or a CPU or board by name (profiles.h: "znver4", "rpi4"). Throws
// UserError naming the valid names otherwise.
Target target_from_name(const std::string& name);
// The preset names, "host" included.
std::vector<std::string> target_preset_names();
// The machine this process runs on (what "host" means).
Target host_target();
// True when code for `t` runs in this process: same architecture, and the host CPU has
// every feature `t` enables.
bool host_can_run(const Target& t);

}  // namespace kiln
