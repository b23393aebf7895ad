// The ONNX node tests of Debian's libonnx-testdata as the network compiler sees them: which
// cases use only operators kiln's op_table claims, each data set turned into a model kiln can
// compile (weights and shape arguments that the test passes as graph inputs frozen into
// initializers, as real exports carry them), its remaining inputs, and the expected outputs
// with the tolerance their operators allow.
#pragma once

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "compiler/graph/bind.h"
#include "compiler/graph/tensor.h"

namespace kiln::network::conformance {

// One data set of one node test, ready to compile.
struct DataSetRun {
  std::string case_name, set_name;
  std::string model_bytes;                     // the ONNX model with frozen inputs
  std::vector<graph::HostTensor> inputs;       // the remaining graph inputs, in order
  std::vector<graph::HostTensor> expected;     // graph outputs, in order
  graph::ShapeBindings shapes;                 // the remaining inputs' shapes
  int frozen = 0;                              // graph inputs frozen into initializers
  double rtol = 1e-4;
};

struct NodeCase {
  std::string name;
  std::filesystem::path dir;
  std::set<std::string> ops;
};

// The folder of the node tests ("" when libonnx-testdata is not installed).
std::filesystem::path node_tests_root();

// Every case under `root` whose operators are all claimed by the network compiler, sorted by
// name; `total` receives the number of cases there.
std::vector<NodeCase> claimed_node_cases(const std::filesystem::path& root, int& total);

// The case's data sets (test_data_set_*), sorted.
std::vector<DataSetRun> data_set_runs(const NodeCase& c);

// "" when `got` (raw bytes of a model output of dtype `dtype`) matches `want` by kiln's
// closeness rule at `rtol` (floats) or exactly (integers, bool); else what differs.
std::string compare_output(const void* got, const std::string& dtype,
                           const graph::HostTensor& want, double rtol);

}  // namespace kiln::network::conformance
