// ONNX ArgMax and ArgMin: the index of the largest (smallest) element along one axis.
//
// Workloads "arg_max", "arg_min": outer, reduced, inner, and select_last (0: the first index
// of a tie, ONNX's default; 1: the last, select_last_index). X is [outer, reduced, inner] (the
// tensor flattened around its axis: the same row-major memory), Y is [outer, inner] holding
// the indices as f32 values (kiln holds integers in f32; exact below 2^24). CLIP's text model
// finds its end-of-text token this way.
#pragma once

#include "schedules/op_template.h"

namespace kiln::schedules {

const std::vector<std::string>& arg_reduce_ops();

// "arg.rows.<op>": per output element, the extreme value along the axis, then the first (or
// last) index holding it; outer rows in parallel.
const OpTemplate& arg_reduce_template(const std::string& op);

}  // namespace kiln::schedules
