// Conversions between f32 and the integer and bool types of a network's inputs and outputs.
// The network compiler holds every computed value in f32 (integers and truth values
// included: exact up to 2^24); a model input of type int64, int32 or bool is converted to
// f32 once where a kernel first reads it, and a model output of such a type is written by a
// conversion from the f32 value.
//
// Workload "cast": "E" (elements), "to_f32" (1: X in the workload's dtype to f32; 0: f32 to
// the workload's dtype). The dtype is i64, i32 or u8 (bool, one byte per element: 0 or 1).
// To an integer the value rounds toward zero; to bool it is 1 where the value is non-zero.
// Its arguments have two dtypes, which the template sweeps (one dtype per workload) do not
// draw, so it is not in the registry: the network compiler calls it by name.
#pragma once

#include "schedules/op_template.h"

namespace kiln::schedules {

const OpTemplate& cast_template();

}  // namespace kiln::schedules
