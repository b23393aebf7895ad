// A small model built by hand for the artifact tests: four kernels written in loop IR, a plan
// over them (model inputs and outputs, the workspace and the params as bases), and the params
// payload, plus a plain C++ reference. What the graph compiler will produce for a real network,
// in miniature:
//
//   t   = x + bias          add_bias (params at offset 0)    -> workspace [0, 512)
//   r   = relu(t)           relu (a parallel loop over rows) -> workspace [512, 1024)
//   y   = r * scale         scale    (params at offset 512)  -> output 0
//   pre = t                 copy                             -> output 1
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/codegen/executor.h"

namespace kiln::testing {

struct TestModel {
  static constexpr int64_t kRows = 4, kCols = 32, kSize = kRows * kCols;
  std::vector<ir::LoweredFunc> kernels;
  codegen::ExecutorPlan plan;
  std::vector<uint8_t> params;  // the payload the plan's params offsets point into
};

// `seed` varies the weights, hence the params checksum: two seeds are two different models.
TestModel make_test_model(const std::string& name = "tiny", int seed = 1);

// y and pre for input x (kSize floats each), from the model's own params payload.
void reference_outputs(const TestModel& m, const std::vector<float>& x, std::vector<float>* y,
                       std::vector<float>* pre);

// A deterministic input with negative and positive values.
std::vector<float> test_input(int seed = 3);

// Writes DIR/model.so (for `target`) and DIR/model.params.
void write_artifact(const TestModel& m, const Target& target, const std::string& dir);

}  // namespace kiln::testing
