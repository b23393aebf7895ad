// The checks a workload passes before any template schedules, builds or runs it, shared by
// OpTemplate::instantiate and every front end (kiln inspect, kiln tune, the network compiler
// through instantiate), so a bad shape gets the same one-line UserError wherever it enters:
//  - what the template declares it accepts: its op, a dtype of dtypes(), epilogue steps of
//    epilogues(), parameters in range (sizes positive, nothing above kMaxParameter);
//  - every argument's element count and byte size computed with overflow checks;
//  - before a run, the memory the host side needs against what the machine has.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "schedules/op_template.h"

namespace kiln::schedules {

// The largest value any parameter but a template's value_params() may take (2^40). Each
// dimension this small keeps the templates' own index arithmetic (h + 2 * pad, y * stride
// + ky, a block rounded up) far from int64's end; their products are checked separately.
constexpr int64_t kMaxParameter = int64_t{1} << 40;

// a * b, or nothing when the product overflows int64 (both non-negative).
std::optional<int64_t> checked_mul(int64_t a, int64_t b);

// What `tpl` declares it accepts (UserError naming the workload and what would be valid):
// w.op is its op, w.dtype one of its dtypes(), every epilogue step one of its epilogues(),
// every parameter but its value_params() in 0..kMaxParameter, and the op's --shape
// parameters (shape_form.h) positive.
void validate_descriptors(const OpTemplate& tpl, const Workload& w);

// Every logical argument of `w` (tpl.inputs, tpl.output) has an element count and a byte
// size that int64 holds; a UserError names the workload, the argument and the parameter
// at which the product overflows. Run after the template's own check of the workload.
void validate_arguments(const OpTemplate& tpl, const Workload& w);

// Bytes the host holds at once to run and check `w` once (tuner/measure/job.h): each input
// as f32, packed and encoded; the output raw, unpacked, decoded, and the reference.
int64_t bytes_for_run(const OpTemplate& tpl, const Workload& w);

// What this machine can still give: MemAvailable of /proc/meminfo, lowered to the room left
// under the cgroup's memory.max when there is one. Nothing when neither can be read.
std::optional<int64_t> available_memory_bytes();

// UserError naming the workload and the bytes needed against `bytes_available` when a run
// of `w` needs more; nothing to check when `bytes_available` is unknown. Call before any
// allocation for the run (kiln inspect --run, kiln tune).
void check_memory_for_run(const OpTemplate& tpl, const Workload& w,
                          std::optional<int64_t> bytes_available);

}  // namespace kiln::schedules
