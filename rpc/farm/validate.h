// Checks that a measurement job makes sense before it is queued (tracker) or run (worker):
// a malformed request gets a clear error status, never a crash further down.
#ifndef KILN_RPC_FARM_VALIDATE_H
#define KILN_RPC_FARM_VALIDATE_H

#include <string>

#include "rpc/farm/farm.pb.h"

namespace kiln::farm {

inline constexpr int kMaxArgs = 64;
inline constexpr int kMaxJobsPerBatch = 10000;
inline constexpr int64_t kMaxArgBytes = 1LL << 30;  // what the worker will allocate per buffer
// ... and for all of a job's buffers together (the worker fills them all before the run).
inline constexpr int64_t kMaxJobArgBytes = 4LL << 30;
inline constexpr double kMaxTimeoutS = 3600;

inline constexpr std::size_t kMaxKeyChars = 128;

// "" when `job` is well formed, else what is wrong with it (naming the field).
std::string validate_job(const pb::Job& job);

// "" when a Submit request may be queued (a device key of 1 to kMaxKeyChars characters, 1 to
// kMaxJobsPerBatch jobs, each well formed), else what is wrong ("jobs[3]: repeat: ...").
std::string validate_submit(const pb::SubmitRequest& request);

}  // namespace kiln::farm

#endif  // KILN_RPC_FARM_VALIDATE_H
