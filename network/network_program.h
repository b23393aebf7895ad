// What the network compiler lowers a graph to before code generation: the buffers every
// kernel call reads and writes, the unique kernels (tasks) and the calls in order. Memory
// planning fills in workspace offsets; the artifact writer turns it into an ExecutorPlan.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/codegen/executor.h"
#include "network/kernel_layout.h"
#include "schedules/config.h"
#include "schedules/op_template.h"

namespace kiln::network {

enum class BufferKind { Input, Output, Workspace, Params };

struct Buffer {
  BufferKind kind = BufferKind::Workspace;
  int index = 0;        // the model input or output (Input, Output)
  uint64_t bytes = 0;
  uint64_t offset = 0;  // into the params (Params) or the arena (Workspace, once planned)
  std::string value;    // the graph value it holds
  Layout layout = 0;
};

// One unique (template, workload, config): built once, called by every step that uses it.
struct Task {
  const schedules::OpTemplate* tpl = nullptr;
  schedules::Workload workload;
  schedules::Config config;
  bool untuned = true;
  std::string kernel;  // the function name in model.so
  int calls = 0;
  double flops = 0;    // floating-point operations of one call
  double tuned_cost_s = 0;  // the record's measured time per call (0 when untuned)
  // Tuned, and the records' best is the very kernel an untuned compile builds here: tuning
  // found nothing faster, which the report says rather than calling the kernel new.
  bool kept_untuned_config = false;
  double tuned_spread = 0;  // (max - min) / median of the record's times (measure_result.h)
  // How the tuned kernel compared with the untuned one timed beside it ("1.18x faster than the
  // untuned config (p=0.002, ...)", "within noise of ..."); empty when not timed together.
  std::string verdict;
};

struct Step {
  int task = 0;
  std::vector<int> args;  // buffer ids in the kernel's argument order; the output last
  std::string node;       // the graph node (or "layout <value>" for a conversion)
  std::string op_type;    // the ONNX op type, "LayoutTransform" for a conversion
};

struct NetworkProgram {
  std::vector<Buffer> buffers;
  std::vector<Task> tasks;
  std::vector<Step> steps;
  std::vector<uint8_t> params;  // the params payload (64-byte aligned tensors)
  std::vector<std::string> input_names, output_names;
  std::vector<std::vector<int64_t>> input_shapes, output_shapes;
  std::vector<ir::DataType> input_dtypes, output_dtypes;  // as the caller's buffers hold them
  uint64_t workspace_bytes = 0;  // after memory planning
  uint64_t naive_workspace_bytes = 0;
  // A ranged batch (ranged_batch.h; 0 and 0: none): `steps` run one sample, each of
  // `batch_classes` runs `batch` samples at once (its steps index the same tasks and buffers).
  std::string batch_symbol;
  codegen::RangedBatch batch;
  struct BatchClass {
    int64_t batch = 0;
    std::vector<Step> steps;
  };
  std::vector<BatchClass> batch_classes;
};

}  // namespace kiln::network
