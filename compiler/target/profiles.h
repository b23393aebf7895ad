// CPUs and boards by name: `--target znver4`, `--target rpi4`. Each profile is a Target with
// LLVM's CPU name and an explicit feature list, fixed here, so that a name means the same code
// on every build machine (only "host" reads the machine), plus the facts about the core a user
// picks a target by. The features listed are the ones kiln's kernels choose instructions by
// and the runtime checks a board for (cpu_features.h); LLVM's CPU name brings the rest of the
// ISA and the scheduling model. A feature a core has but kiln must not rely on is disabled
// ("-sve": Neoverse-V1's SVE is left alone, so the code also runs on cores without it).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "compiler/target/target.h"

namespace kiln {

struct CpuProfile {
  std::string name;                  // "cortex-a72": LLVM's CPU name where there is one
  std::vector<std::string> aliases;  // {"rpi4"}: boards and cloud instances by their names
  std::string describes;             // "Raspberry Pi 4 (BCM2711): 4 x Cortex-A72"
  Target target;                     // name = the profile's name; its caches are the core's
  double ghz = 0;                    // the clock its cores usually run at (the board's, or
                                     // the instance's all-core clock): what `kiln analyze`
                                     // turns predicted cycles into milliseconds with
  std::string note;                  // how to run on it, when that matters ("big cores ...")
  // The CPU whose LLVM scheduling model stands for this one in `kiln inspect --analyze`, when
  // LLVM has none of its own (empty: its own name). LLVM 19 times a Cortex-A76 with the
  // Cortex-A57's model; the Neoverse-N1 is the A76's design, and has a model.
  std::string model_cpu;
};

// Every profile, x86 first, in a stable order (what `kiln targets` lists).
const std::vector<CpuProfile>& cpu_profiles();
// The profile named `name` or one of its aliases; nullptr when there is none.
const CpuProfile* find_cpu_profile(std::string_view name);

}  // namespace kiln
