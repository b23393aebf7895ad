// What the CPU this process runs on can execute, probed without any compiler library (cpuid
// and xgetbv on x86-64, the kernel's hardware capabilities on AArch64), so the tiny runtime
// can refuse a kernel whose instructions the board lacks before any of them runs, and the
// compiler's "host" target can describe this machine.
//
// Feature names are LLVM's ("avx2", "avx512f", "avx512bf16", "neon", "fullfp16", "bf16", ...),
// the names kiln's targets list, so a kernel's recorded needs compare as plain strings.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kiln {

// "x86_64", "aarch64", or "unknown".
std::string_view cpu_arch();
// The features of cpu_known_features() this CPU has (and the OS has enabled, for the
// AVX/AVX-512 register state), in that list's order.
const std::vector<std::string>& cpu_features();
// Every feature the probe can tell about on this architecture.
const std::vector<std::string>& cpu_known_features();
// True when `feature` (with or without a leading '+') is in cpu_features().
bool cpu_has(std::string_view feature);

}  // namespace kiln
