// Kernel argument data for farm jobs: element sizes, the deterministic input fill and the
// output comparison with tolerance. Shared by the sandbox helper (which fills inputs), the
// worker (which checks outputs) and clients (which compute reference values from the same
// inputs). Plain C++: no gRPC here, so the sandbox stays small.
#ifndef KILN_RPC_FARM_DATA_H
#define KILN_RPC_FARM_DATA_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "rpc/farm/farm.pb.h"

namespace kiln::farm {

// Bytes per element of `dtype`; 0 for DTYPE_UNSPECIFIED or an unknown value.
std::size_t dtype_size(pb::DType dtype);
std::string dtype_name(pb::DType dtype);

// Elements of `arg` (product of its shape), or -1 when a dimension is negative or the total
// overflows `limit` bytes.
int64_t arg_bytes(const pb::Arg& arg, int64_t limit);

// The contents of argument `index` of a job seeded with `seed`: `arg.data` when given, else a
// deterministic pattern (floats uniform in [-1, 1), integers small) that depends only on
// seed, index, dtype and size, so that a client can recompute it for its reference.
std::vector<uint8_t> fill_arg(const pb::Arg& arg, uint64_t seed, std::size_t index);

// Compares `got` with `want` as arrays of `dtype`: floating point by kiln/compare.h's rule
// (rtol against max(1, |want|, rms(want))), integers exactly. Returns ""
// when they match, else a message naming the first mismatch and how many differ.
std::string compare_outputs(pb::DType dtype, const std::vector<uint8_t>& got,
                            const std::string& want, double rtol);

// ErrorKind as a short word ("ok", "build_error", "runtime_error", ...).
std::string error_kind_name(pb::ErrorKind kind);

}  // namespace kiln::farm

#endif  // KILN_RPC_FARM_DATA_H
