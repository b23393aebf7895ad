// The tuner's measurement types in the farm's wire format and back: the one translation
// between MeasureInput / RunResult and farm::pb::Job / farm::pb::Result, used by the runners
// that hand jobs to the farm's code (FarmRunner over gRPC, LocalRunner to the sandbox).
#pragma once

#include "rpc/farm/farm.pb.h"
#include "tuner/measure/measure_input.h"

namespace kiln::tuner {

// The job that runs `input` and returns every output argument's bytes. The farm does not
// compare them (candidates of a batch write their outputs in their own layouts, so the farm's
// check against the batch's first correct output would call correct kernels wrong): the tuner
// judges each output against its own reference (tuner/measure/job.h).
farm::pb::Job to_farm_job(const MeasureInput& input);
// The farm's result as the tuner's: error kind mapped, costs and outputs copied.
RunResult from_farm_result(const farm::pb::Result& result);
// The farm's error kinds as the tuner's.
MeasureErrorKind measure_error_of(farm::pb::ErrorKind kind);

}  // namespace kiln::tuner
