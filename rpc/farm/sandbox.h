// The worker's side of measurement: runs one job in a fresh kiln-kernel-runner child (maybe
// under qemu-aarch64), kills it when it runs past the job's timeout or is cancelled, turns
// its exit into an error kind, and checks its outputs against the job's reference.
#ifndef KILN_RPC_FARM_SANDBOX_H
#define KILN_RPC_FARM_SANDBOX_H

#include <atomic>
#include <string>
#include <vector>

#include "rpc/farm/farm.pb.h"
#include "rpc/farm/sandbox_config.h"

namespace kiln::farm {

// Runs `job` and returns its result (error kind, message, costs, number, outputs when asked
// for, start and end times); never throws for anything the candidate does. Sets `cancel` to
// stop the run early (the result is then CANCELLED).
pb::Result run_in_sandbox(const pb::Job& job, const SandboxConfig& config,
                          const std::atomic<bool>& cancel);

}  // namespace kiln::farm

#endif  // KILN_RPC_FARM_SANDBOX_H
