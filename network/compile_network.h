// `kiln compile`: an ONNX file to a model directory (model.so, model.params, model.json).
// compile_network.cpp lists the whole pipeline in order; each step is its own file:
//   import -> bind input shapes -> graph passes (infer shapes, fold constants...) ->
//   fold BatchNormalization into Conv -> with records, choose every kernel's channel blocks
//   jointly (layout_plan.h) -> lower to kernel calls (workloads, apply-history-best, packed
//   constants, layout conversions) -> plan memory -> write the
//   artifact (every kernel built once, the AOT executor, params, description).
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "compiler/graph/bind.h"
#include "compiler/target/target.h"
#include "network/assign_precision.h"
#include "network/error_budget.h"
#include "network/half_paths.h"
#include "network/int8_paths.h"
#include "network/network_program.h"
#include "network/prepare_graph.h"
#include "network/provenance.h"

namespace kiln::network {

struct CompileOptions {
  std::string model_path;
  Target target;
  std::vector<std::string> record_logs;  // tuning logs for apply-history-best
  graph::ShapeBindings input_shapes;
  std::string out_dir;
  // The model's name (model.json, model.h's kiln_model_<NAME> table); "": the ONNX file's stem.
  std::string name;
  PrecisionOptions precision;  // --dtype, --keep-last-f32
  // `kiln records pin` files (last: the fields above are often given in order): their configs
  // are built for their workloads whatever record_logs hold.
  std::vector<std::string> pin_logs;
  // --range SYMBOL=MIN..MAX: one artifact for every batch in the range (ranged_batch.h).
  std::optional<graph::DimRange> batch_range;
  // --batch-classes: the larger batches built besides one sample; unset: ranged_batch.h's rule.
  std::optional<std::vector<int64_t>> batch_classes;
  // --records-cpu: whose records a workload takes first (tuner/cpu_match.h): auto, host, any
  // or part of a CPU's name.
  std::string records_cpu = "auto";
  // --max-error E --calibration DIR: of the layers the records run in a fast form, as many as
  // keep the outputs within E of the precise model's on those inputs (error_budget.h).
  std::optional<ErrorBudget> error_budget;
  std::ostream* progress = nullptr;  // a line per program the error budget runs
};

// One row of the per-layer table (model.json "layers").
struct LayerRow {
  std::string node, op_type, workload, tpl;
  std::string dtype = "f32";  // the kernel's inputs ("bf16" for a half conv), for model.json
  bool tuned = false;
  double flops = 0;    // of the call
  uint64_t bytes = 0;  // its arguments' bytes: what it reads and writes at least once
};

struct CompileReport {
  NetworkProgram program;
  std::vector<LayerRow> layers;
  int bn_folded = 0, bn_scale_shifts = 0, epilogues_fused = 0;
  int convs_split = 0;  // split_padded_convs
  std::string layout_choice;  // with records: the joint layout choice (layout_plan.h)
  // With --records: how many records were read, matched this target and model, and why the
  // rest did not (records_use.h).
  std::string records_use;
  PrecisionCounts precision;
  std::vector<KeptFloat> int8_kept_float;  // quantized convs left in float (int8_choice.h)
  Int8PathPlan int8_paths;  // with records: each quantized conv's two paths timed (int8_paths.h)
  HalfPathPlan half_paths;  // with records and --dtype bf16|f16: each layer's two forms timed
  std::optional<ErrorBudgetFit> error_fit;  // with --max-error
  RecordsProvenance provenance;  // with --records or --pins: the logs, each tuned kernel's record
  ir::DataType dtype = ir::DataType::f32();  // what --dtype asked for
  double seconds = 0;
};

// Compiles, writing out_dir's files only when everything succeeded.
CompileReport compile_network(const CompileOptions& options);

// Human-readable report: the task list with counts, the per-layer table, memory and time.
std::string format_report(const CompileReport& report);

}  // namespace kiln::network
