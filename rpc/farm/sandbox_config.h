// Where and how the measurement sandbox runs a job: the kernel runner's path, the command
// that runs it (qemu-aarch64 for AArch64 kernels) and the child's memory limit. Apart from
// sandbox.h so that code which only chooses a sandbox (the tuner's local runner, the worker's
// options) does not see the farm's wire format.
#ifndef KILN_RPC_FARM_SANDBOX_CONFIG_H
#define KILN_RPC_FARM_SANDBOX_CONFIG_H

#include <string>
#include <vector>

namespace kiln::farm {

struct SandboxConfig {
  std::string helper;               // path of kiln-kernel-runner (runtime/tools)
  std::vector<std::string> prefix;  // e.g. {"qemu-aarch64", "-cpu", "max", "-L", "/"}
  long mem_mb = 8192;               // address-space limit of the child (0: none)
};

// The path of kiln-kernel-runner beside the running executable, else `fallback`.
std::string default_sandbox_helper(const std::string& fallback);

}  // namespace kiln::farm

#endif  // KILN_RPC_FARM_SANDBOX_CONFIG_H
