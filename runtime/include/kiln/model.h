// A compiled model on the board: `model.so` (every kernel plus the generated kiln_model_run
// that calls them in order) and `model.params` (the weights), loaded once and run many times.
//
//   kiln::Model m = kiln::Model::load("out/model.so", "out/model.params");
//   m.run({input}, {output});          // no heap allocation inside run()
//
// or, with the model linked statically from model.a (its model.h declares the entry table):
//
//   kiln::Model m = kiln::Model::load_static(kiln_model_resnet18, "out/model.params");
//
// Loading checks that the .so is a kiln model for this architecture and CPU (kernel_abi.h),
// that its info record parses, and that the params file is well formed and the one the .so was
// built with (same size and checksum, its chunk table combining into that checksum: params.h).
// The params' bytes themselves are checked chunk by chunk during the first run, each just
// before the first step that reads it, so that a large model loads in about a millisecond: a
// corrupt chunk stops that run (RuntimeError kParams naming the chunk) before any step reads
// it. verify_params() checks them all at once instead. The workspace arena is allocated at
// load, 64-byte aligned. Errors are kiln::RuntimeError naming the file at fault; runtime_c.h
// has the same behind status codes.
#ifndef KILN_MODEL_H
#define KILN_MODEL_H

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "kiln/kernel_abi.h"

namespace kiln {

// One input or output of a model, as its info record describes it.
struct TensorInfo {
  std::string name;
  std::string dtype;           // "f32", "bf16", "i8", ... (kernel_abi.h lists them)
  std::vector<int64_t> shape;  // empty for a scalar
  uint64_t bytes = 0;          // element count * element size: what the caller's buffer holds
  // Axis 0 is the model's ranged batch (Model::min_batch): shape and bytes are then those of
  // min_batch() samples, and a batch of b samples holds bytes / min_batch() * b.
  bool batched = false;
};

class Model {
 public:
  // `num_threads` sizes the model's own thread pool (0: KILN_NUM_THREADS, else the CPUs this
  // process may use).
  static Model load(const std::string& so_path, const std::string& params_path,
                    int num_threads = 0);
  // A model linked into the program from its model.a: `entry` is the kiln_model_<NAME> table
  // its model.h declares. The same checks as load(): the CPU has the target's features, the
  // params file is intact and the one the model was built with.
  static Model load_static(const kiln_model_entry& entry, const std::string& params_path,
                           int num_threads = 0);

  Model(Model&& other) noexcept;
  Model& operator=(Model&& other) noexcept;
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;
  ~Model();

  // Runs the model: inputs[i] points at input i (inputs()[i].bytes bytes, not modified),
  // outputs[i] at the buffer that receives output i. Buffers must be aligned to their element
  // size. Allocates nothing; calls on one Model from several threads are serialised (they share
  // the workspace). Throws RuntimeError: kInvalidArgument for a wrong count or a null pointer,
  // kInvalidInput when an index input holds a value out of range, kKernel when a kernel fails,
  // kParams when a params chunk the run needs is corrupt (the outputs are then undefined).
  void run(std::span<const void* const> inputs, std::span<void* const> outputs) const;
  void run(std::initializer_list<const void*> inputs, std::initializer_list<void*> outputs) const {
    run(std::span<const void* const>(inputs.begin(), inputs.size()),
        std::span<void* const>(outputs.begin(), outputs.size()));
  }

  // A tensor as the caller holds it: its data and shape.
  struct Tensor {
    const void* data = nullptr;
    std::span<const int64_t> shape;
  };
  // run() with each input's shape stated: RuntimeError kInvalidInput naming the input and both
  // shapes when a shape is not the model's (nothing runs then).
  // A model compiled with a ranged batch takes any batch b from min_batch() to max_batch():
  // every batched input holds b samples along axis 0 (the rest of its shape the model's), and
  // each output receives b samples (its buffer: outputs()[i].bytes / min_batch() * b bytes).
  // Returns b (1 for a model without a range).
  int64_t run_shaped(std::span<const Tensor> inputs, std::span<void* const> outputs) const;
  // The same check alone: throws as run_shaped does, returns the batch.
  int64_t check_input_shapes(std::span<const std::span<const int64_t>> shapes) const;
  // The ranged batch the model was compiled for (kiln compile --range); 0 and 0 without one.
  // run() runs min_batch() samples.
  int64_t min_batch() const;
  int64_t max_batch() const;

  // Checks every params chunk the first run has not checked yet (all of them before it):
  // RuntimeError kParams naming the first corrupt chunk. For a caller that wants a corrupt
  // file refused at load, at the cost of reading it all there.
  void verify_params() const;

  const std::string& name() const;
  const std::vector<TensorInfo>& inputs() const;
  const std::vector<TensorInfo>& outputs() const;
  uint64_t workspace_bytes() const;
  uint64_t params_bytes() const;
  int num_threads() const;
  // The .so's path; "NAME (statically linked)" for load_static.
  const std::string& so_path() const;

 private:
  struct State;
  explicit Model(std::unique_ptr<State> state);
  void check_pointers(std::span<const void* const> inputs, std::span<void* const> outputs) const;
  void run_batch(const void* const* inputs, void* const* outputs, int64_t batch) const;
  std::unique_ptr<State> state_;
};

}  // namespace kiln

#endif  // KILN_MODEL_H
