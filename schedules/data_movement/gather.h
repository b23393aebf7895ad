// Gather with computed indices: rows of a table picked by an index tensor, the embedding
// lookup of transformers (the table a constant, the indices the token ids). Constant indices
// that step evenly are a strided slice instead (network maps them so).
//
// Workload "gather": "outer" (the product of the data's dimensions before the axis), "N"
// (the axis' extent), "inner" (the product after it) and "K" (the number of indices).
// Inputs: "data" [outer, N, inner] and "indices" [K], integers held in f32 as the network
// compiler holds every computed value (exact up to 2^24); output "out" [outer, K, inner].
// An index i < 0 counts from the end (i + N), as ONNX's Gather; an index still outside
// [0, N) is clamped into it, so that no input makes the kernel read outside the table.
#pragma once

#include "schedules/op_template.h"

namespace kiln::schedules {

const OpTemplate& gather_template();

}  // namespace kiln::schedules
