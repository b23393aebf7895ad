// `kiln tune MODEL --precisions f32,int8` / `f32,bf16` / `f32,f16` (or `--dtype auto`): a
// network tune that measures each layer in both precisions, so that `kiln compile --records`
// runs each layer in the faster one.
//   - f32,int8, on a quantized model: each quantized conv's int8 kernel against its float path
//     (network/int8_paths.h);
//   - f32,bf16 or f32,f16: each conv/dense layer in the half type against f32
//     (network/half_paths.h); compile with --dtype bf16|f16 and the log.
//   - --dtype auto: f32,int8 on a quantized model, else f32 and the half type the target has
//     kernels for (bf16 first).
// After the search, the kernels of either form the log has no time for (the quantize,
// dequantize and casts at a region's edges; a kernel with one config) are measured once, a
// layer the times move to f32 is timed again, and the table of both forms is printed.
#pragma once

#include <string>
#include <vector>

#include "compiler/graph/bind.h"
#include "network/assign_precision.h"
#include "tools/tune_args.h"
#include "tuner/measure/runner.h"
#include "tuner/records.h"

namespace kiln::tools {

// --dtype, --keep-last-f32 and --precisions as prepare_graph and extract_tasks take them;
// UserError for a choice this model or target does not offer.
network::PrecisionOptions network_precision(const TuneArgs& a, const Target& target,
                                            const graph::ShapeBindings& shapes);

// After the search, with `precision` from network_precision: nothing unless it asks for a
// choice. `sizes`: the bindings compile builds the network at (a ranged batch: one sample and
// each batch class, `batch_symbol` bound in each), each chosen for on its own.
void measure_precision_choice(const TuneArgs& a, const Target& target,
                              const std::vector<graph::ShapeBindings>& sizes,
                              const std::string& batch_symbol,
                              const network::PrecisionOptions& precision, tuner::Runner& runner,
                              tuner::RecordWriter& log);

}  // namespace kiln::tools
