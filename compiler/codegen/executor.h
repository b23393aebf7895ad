// The AOT executor of a compiled model: what the graph compiler hands codegen once it has
// lowered every kernel of a network and planned its memory, and what becomes `model.so`.
//
// An ExecutorPlan is plain data: the model's inputs and outputs, the size of one workspace
// arena and of the params payload, and the kernels to call in order, each argument a byte
// offset into one of four bases (a model input, a model output, the workspace, the params).
// compile_model emits, into the same LLVM module as the kernels,
//   int32_t kiln_model_run(void* const* inputs, void* const* outputs, void* workspace,
//                          const void* params)
// which calls every step's kernel with a pointer array built from base + offset and returns the
// first non-zero status, and the text record `kiln_model_info` that the runtime parses (both
// specified in runtime/include/kiln/kernel_abi.h). No graph interpreter runs on the board.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/codegen/codegen.h"
#include "compiler/ir/lowered_func.h"
#include "compiler/ir/type.h"

namespace kiln::codegen {

// A model input or output.
struct TensorSpec {
  std::string name;            // no whitespace: the info record is space-separated
  ir::DataType dtype;          // scalar: f32 f16 bf16 f64 i8 i16 i32 i64 u8 u16 u32 bool
  std::vector<int64_t> shape;  // empty for a scalar
};

enum class ArgBaseKind { Input, Output, Workspace, Params };

// One kernel argument: `offset` bytes into its base; `index` picks the model input or output
// (ignored for Workspace and Params).
struct StepArg {
  ArgBaseKind base = ArgBaseKind::Workspace;
  int index = 0;
  uint64_t offset = 0;
};

struct ExecutorStep {
  std::string kernel;         // a LoweredFunc's name, compiled into the same module
  std::vector<StepArg> args;  // one per buffer argument of the kernel, in its order
};

// A ranged batch as a model records it (max 0: none): the batches it takes, which inputs carry
// the batch on axis 0 (the others are shared by every sample), and whether the runtime pads a
// batch's last run up to the smallest class that holds it (exact: the samples are independent;
// for a model whose runs cost about the same whatever their batch).
struct RangedBatch {
  int64_t min = 0, max = 0;
  std::vector<bool> batched_inputs;
  bool pad = false;
};

struct ExecutorPlan {
  std::string name;
  std::vector<TensorSpec> inputs;
  std::vector<TensorSpec> outputs;
  uint64_t workspace_bytes = 0;
  uint64_t params_bytes = 0;     // the params payload the model is built for...
  uint64_t params_checksum = 0;  // ...and its FNV-1a 64 (kiln::params_checksum, params.h)
  std::vector<ExecutorStep> steps;
  // A ranged batch: `steps` run one sample; the runtime runs a batch of b samples as runs of
  // its batch classes, each on the next slices along axis 0 of the batched inputs and outputs.
  RangedBatch batch;
  // Larger batch classes, each a program of its own over `batch` samples at once (the same
  // params, the one workspace). With any, kiln_model_run reads which class to run from the
  // pointer slot after the last input: 0 for `steps`, k for batch_classes[k - 1].
  struct BatchClass {
    int64_t batch = 0;
    std::vector<ExecutorStep> steps;
  };
  std::vector<BatchClass> batch_classes;
};

// The bases' helpers, for plans written by hand.
inline StepArg input_arg(int index, uint64_t offset = 0) {
  return {ArgBaseKind::Input, index, offset};
}
inline StepArg output_arg(int index, uint64_t offset = 0) {
  return {ArgBaseKind::Output, index, offset};
}
inline StepArg workspace_arg(uint64_t offset) {
  return {ArgBaseKind::Workspace, 0, offset};
}
inline StepArg params_arg(uint64_t offset) {
  return {ArgBaseKind::Params, 0, offset};
}

// Bytes of a tensor: elements * element size.
uint64_t tensor_bytes(const TensorSpec& t);

// Throws UserError, naming the step (index and kernel) and the argument, for a plan that
// cannot run: no steps; a name with whitespace or used twice; a dtype the info record cannot
// carry; a kernel that is not among `kernels`; an argument count other than the kernel's
// buffer count; an input/output index out of range; an argument whose bytes (when the kernel's
// buffer has a constant shape) run past its base's size, or whose offset is not a multiple of
// its element size; two arguments of one step that overlap (kernels take their buffers as
// non-aliasing); a kernel that writes an argument placed in the params (mapped read-only) or in
// a model input (the caller's).
void validate_plan(const std::vector<ir::LoweredFunc>& kernels, const ExecutorPlan& plan);

// Before step `step` first runs, params chunks [0, chunks) (kiln/params.h) must be checked.
struct ParamsCheckPoint {
  size_t step;
  uint64_t chunks;
};
// The points where the params a model's steps read grow past a chunk boundary, in step order:
// the info record's "verify" line, which lets the runtime check each chunk just before its
// first use rather than the whole file at load.
std::vector<ParamsCheckPoint> params_check_schedule(const ExecutorPlan& plan);

// The kiln_model_info text of `plan` (format in runtime/include/kiln/kernel_abi.h).
std::string model_info_text(const ExecutorPlan& plan);

// The name of a model's entry table in model.a (kiln_model_entry, kernel_abi.h): "kiln_model_"
// and the model's name with every character outside [A-Za-z0-9_] turned into '_'.
std::string static_entry_symbol(const std::string& model_name);

// Validates the plan, then compiles the kernels, kiln_model_run and kiln_model_info into one
// object, as compile_module does for kernels alone. With `static_object`, also the object of
// model.a from the same optimised code: every symbol internal except the entry table
// static_entry_symbol(plan.name), so that several models link into one program.
CompiledModule compile_model(const std::vector<ir::LoweredFunc>& kernels, const ExecutorPlan& plan,
                             const Target& target, const CodegenOptions& options = {},
                             std::vector<uint8_t>* static_object = nullptr);

// compile_model, then link_shared_object into `out_path` (model.so): complete or not at all.
CompiledModule build_model(const std::vector<ir::LoweredFunc>& kernels, const ExecutorPlan& plan,
                           const Target& target, const std::string& out_path,
                           const CodegenOptions& options = {});

}  // namespace kiln::codegen
