// What the tuner hands a runner and gets back, in its own plain types (AutoTVM's MeasureInput
// after building, and the raw half of its MeasureResult). Where the job runs (a farm board, a
// sandbox child here) is the runner's business: only the farm runner speaks the farm's wire
// format (tuner/measure/farm_wire.h), so the tuner, the kernel tests and `kiln inspect --run`
// describe a measurement once and read its result once.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/ir/type.h"
#include "tuner/host_values.h"
#include "tuner/measure_result.h"

namespace kiln::tuner {

// One kernel argument: its element type and count, and its bytes (inputs only; an output
// travels empty and the device zeroes it, so a batch of large tasks carries no dead bytes).
struct KernelArgument {
  ir::DataType dtype = ir::DataType::f32();
  int64_t elements = 0;
  bool is_output = false;
  Bytes data;
};

// How one job is timed (kiln/timing.h's options, plus where the job runs).
struct MeasureOptions {
  uint32_t number = 1;        // calls per repeat (raised to meet min_repeat_ms)
  uint32_t repeat = 3;        // timed repeats of a 1-thread kernel: one cost each (more on
                              // several threads: tuner/measure/repeats.h)
  double min_repeat_ms = 0;   // AutoTVM's rule: one repeat lasts at least this long
  double timeout_s = 10;      // wall clock for the whole job in its sandbox
  uint32_t threads = 1;       // the kernel's thread pool
  bool flush_cache = false;   // sweep a large buffer between repeats
};

// A built candidate ready to time: its shared object, the kernel's symbol, its arguments in
// call order. Every output's final bytes come back in RunResult::outputs, in argument order.
struct MeasureInput {
  Bytes so;
  std::string entry;
  std::vector<KernelArgument> args;
  MeasureOptions options;
};

// What the device said about one input, before anyone judged the outputs.
struct RunResult {
  MeasureErrorKind error = MeasureErrorKind::Ok;
  std::string message;         // why it failed; empty when ok
  std::vector<double> costs;   // seconds per call, one per repeat
  std::vector<Bytes> outputs;  // each output argument's bytes, in argument order
  MeasuredOn machine;          // where it ran, as the device said (threads: the tuner's)
  bool ok() const { return error == MeasureErrorKind::Ok; }
};

}  // namespace kiln::tuner
