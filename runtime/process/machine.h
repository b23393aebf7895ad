// The machine a measurement runs on, as tuning records name it: the CPU's vendor and model,
// the features kiln's probe reads (kiln/cpu_features.h), its online cores and the kiln that
// measured. Records keyed to it let a team merge logs from laptops, CI and boards into one
// file, and let `kiln compile` prefer the records of the CPU it deploys to
// (tuner/cpu_match.h).
//
// x86-64 reads the vendor and brand strings and the family and model numbers from cpuid
// (a hypervisor may shorten the brand string, not the numbers); AArch64 reads the main ID
// register's implementer and part from /proc/cpuinfo (or, where that has none, as under
// qemu's user mode, from the register itself) and names the common cores. A field the
// machine does not tell is "unknown", never empty.
#ifndef KILN_PROCESS_MACHINE_H
#define KILN_PROCESS_MACHINE_H

#include <string>
#include <string_view>
#include <vector>

#include "kiln/cpu_features.h"

namespace kiln {

// kiln's version, as records and `kiln --version` print it.
const char* kiln_version();

struct MachineIdentity {
  std::string vendor;                 // "GenuineIntel", "AuthenticAMD", "ARM", "Apple", ...
  std::string model;                  // "AMD EPYC 7B12 (family 23, model 49)", "Cortex-A72"
  std::vector<std::string> features;  // cpu_features(), in the probe's order
  unsigned cores = 0;                 // online CPUs
};

// This process's machine (probed once).
const MachineIdentity& this_machine();

// The `--target` to tune and compile for a board (`kiln-worker --print-board`): the core's own
// profile when kiln has one and the board has every feature it needs ("cortex-a72"), else the
// widest ARM preset its features run ("arm-fp16"); "host" on x86-64. `why` says which.
struct BoardTarget {
  std::string target, why;
};
BoardTarget suggested_target(const MachineIdentity& m, std::string_view arch = cpu_arch());

// The name of an AArch64 core from its MIDR implementer and part numbers, e.g. (0x41, 0xd08)
// -> {"ARM", "Cortex-A72"}; unknown numbers are named in hex ("ARM", "part 0xd99").
MachineIdentity aarch64_core(unsigned implementer, unsigned part);

}  // namespace kiln

#endif  // KILN_PROCESS_MACHINE_H
