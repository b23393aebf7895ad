// The precision flags `kiln compile` and `kiln tune MODEL.onnx` share: --dtype f32|bf16|f16
// (conv/dense layers in that type where the target has kernels for it) and
// --keep-last-f32 / --no-keep-last-f32 (the last conv/dense layers stay f32; on by default).
// Both commands must read them alike: tuned workloads are only the compiled ones when the
// same precision produced them.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "network/assign_precision.h"

namespace kiln::tools {

// Adds --keep-last-f32 / --no-keep-last-f32 (compile also adds --dtype through this; tune has
// its --dtype from the operator flags already).
void add_keep_last_flag(CLI::App& cmd, bool& keep_last_f32);

// UserError naming --dtype when it is not f32, bf16 or f16.
network::PrecisionOptions precision_options(const std::string& dtype, bool keep_last_f32);

}  // namespace kiln::tools
