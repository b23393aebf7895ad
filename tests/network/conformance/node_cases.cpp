#include "tests/network/conformance/node_cases.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

#include "compiler/base/error.h"
#include "compiler/graph/onnx_import.h"
#include "network/op_table.h"
#include "kiln/compare.h"

namespace kiln::network::conformance {

namespace fs = std::filesystem;

namespace {

// Inputs kiln takes at compile time: weights, and the arguments that fix shapes, axes, pads or
// bounds (kiln compiles for fixed shapes). Real exports carry them as initializers; the node
// tests pass them as graph inputs, so they are frozen into initializers with the test's data.
const std::map<std::string, std::vector<int>>& compile_time_inputs() {
  static const std::map<std::string, std::vector<int>> k = {
      {"Conv", {1, 2}},
      {"ConvTranspose", {1, 2}},
      {"Gemm", {1, 2}},
      {"BatchNormalization", {1, 2, 3, 4}},
      {"LayerNormalization", {1, 2}},
      {"PRelu", {1}},
      {"Reshape", {1}},
      {"Slice", {1, 2, 3, 4}},
      {"Pad", {1, 2, 3}},
      {"Resize", {1, 2, 3}},
      {"Upsample", {1}},
      {"Clip", {1, 2}},
      {"Squeeze", {1}},
      {"Unsqueeze", {1}},
      {"ReduceSum", {1}},
      {"ReduceMean", {1}},
      {"ReduceMax", {1}},
      {"Expand", {1}},
      {"ReduceMin", {1}},
      {"ReduceL1", {1}},
      {"ReduceL2", {1}},
      {"ReduceSumSquare", {1}},
      {"ReduceLogSum", {1}},
      {"ReduceLogSumExp", {1}},
      {"Tile", {1}},
      {"GatherElements", {1}},
      {"GatherND", {1}},
      {"ScatterElements", {1}},
      {"ScatterND", {1}},
      {"LSTM", {1, 2, 3, 4, 7}},
      {"GRU", {1, 2, 3, 4}},
      {"RNN", {1, 2, 3, 4}},
      // Scales and zero points (and the int8 operators' weights) are constants in a quantized
      // model; the activation itself stays an input.
      {"QuantizeLinear", {1, 2}},
      {"DequantizeLinear", {1, 2}},
      {"QLinearConv", {1, 2, 3, 4, 5, 6, 7, 8}},
      {"QLinearMatMul", {1, 2, 3, 4, 5, 6, 7}},
  };
  return k;
}

// Where kiln's kernels approximate (polynomial exp, log, erf, tanh), the relative error they
// are checked to elsewhere; 1e-4 (kiln's f32 rule) for everything else.
double tolerance_for(const std::set<std::string>& ops) {
  double rtol = 1e-4;
  for (const char* op : {"Pow"})
    if (ops.count(op)) rtol = std::max(rtol, 1e-3);
  return rtol;
}

onnx::ModelProto read_model(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  onnx::ModelProto proto;
  internal_check(in && proto.ParseFromIstream(&in)) << "cannot parse " << path.string();
  return proto;
}

onnx::TensorProto read_tensor_proto(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  onnx::TensorProto proto;
  internal_check(in && proto.ParseFromIstream(&in)) << "cannot parse " << path.string();
  return proto;
}

// The graph inputs that a node reads in a compile-time slot.
std::set<std::string> inputs_to_freeze(const onnx::GraphProto& g) {
  std::set<std::string> out;
  for (const onnx::NodeProto& n : g.node()) {
    auto it = compile_time_inputs().find(n.op_type());
    if (it == compile_time_inputs().end()) continue;
    for (int slot : it->second)
      if (slot < n.input_size() && !n.input(slot).empty()) out.insert(n.input(slot));
  }
  return out;
}

// ONNX test data stores bfloat16 as uint16 (numpy has none): reinterpret as the bits they are.
graph::HostTensor as_dtype(graph::HostTensor t, graph::DataType want) {
  if (want != graph::DataType::bf16() || t.dtype() != graph::DataType::u16()) return t;
  graph::HostTensor r(want, t.shape());
  if (t.nbytes()) std::memcpy(r.raw(), t.raw(), t.nbytes());
  return r;
}

DataSetRun prepare(const NodeCase& c, const onnx::ModelProto& original, const fs::path& set) {
  DataSetRun run;
  run.case_name = c.name;
  run.set_name = set.filename().string();
  run.rtol = tolerance_for(c.ops);
  onnx::ModelProto model = original;
  onnx::GraphProto& g = *model.mutable_graph();
  std::set<std::string> initializers;
  for (const onnx::TensorProto& t : g.initializer()) initializers.insert(t.name());
  const std::set<std::string> freeze = inputs_to_freeze(g);
  google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> kept;
  int k = 0;
  for (const onnx::ValueInfoProto& in : g.input()) {
    if (initializers.count(in.name())) {
      *kept.Add() = in;
      continue;
    }
    const fs::path file = set / ("input_" + std::to_string(k++) + ".pb");
    if (freeze.count(in.name())) {
      onnx::TensorProto t = read_tensor_proto(file);
      t.set_name(in.name());
      *g.add_initializer() = t;
      ++run.frozen;
      continue;
    }
    *kept.Add() = in;
    graph::HostTensor data = graph::import_onnx_tensor_file(file.string());
    run.shapes[in.name()] = data.shape();
    run.inputs.push_back(std::move(data));
  }
  g.mutable_input()->Swap(&kept);
  for (int o = 0; o < g.output_size(); ++o) {
    graph::HostTensor want =
        graph::import_onnx_tensor_file((set / ("output_" + std::to_string(o) + ".pb")).string());
    const onnx::TypeProto& type = g.output(o).type();
    if (type.has_tensor_type() && type.tensor_type().elem_type() == onnx::TensorProto::BFLOAT16)
      want = as_dtype(std::move(want), graph::DataType::bf16());
    run.expected.push_back(std::move(want));
  }
  run.model_bytes = model.SerializeAsString();
  return run;
}

}  // namespace

fs::path node_tests_root() {
  const fs::path root = fs::path(KILN_ONNX_TESTDATA_DIR) / "node";
  return std::string(KILN_ONNX_TESTDATA_DIR).empty() || !fs::exists(root) ? fs::path() : root;
}

std::vector<NodeCase> claimed_node_cases(const fs::path& root, int& total) {
  std::set<std::string> claimed;
  for (const std::string& op : supported_op_types()) claimed.insert(op);
  claimed.insert({"Constant", "Upsample"});  // folded into initializers / imported as Resize
  std::vector<NodeCase> cases;
  total = 0;
  for (const auto& e : fs::directory_iterator(root)) {
    if (!fs::exists(e.path() / "model.onnx")) continue;
    ++total;
    const onnx::ModelProto proto = read_model(e.path() / "model.onnx");
    NodeCase c{e.path().filename().string(), e.path(), {}};
    bool ours = true;
    for (const onnx::NodeProto& n : proto.graph().node()) {
      c.ops.insert(n.op_type());
      ours = ours && claimed.count(n.op_type()) && (n.domain().empty() || n.domain() == "ai.onnx");
    }
    if (ours) cases.push_back(std::move(c));
  }
  std::sort(cases.begin(), cases.end(),
            [](const NodeCase& a, const NodeCase& b) { return a.name < b.name; });
  return cases;
}

std::vector<DataSetRun> data_set_runs(const NodeCase& c) {
  const onnx::ModelProto model = read_model(c.dir / "model.onnx");
  std::vector<fs::path> sets;
  for (const auto& e : fs::directory_iterator(c.dir))
    if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0)
      sets.push_back(e.path());
  std::sort(sets.begin(), sets.end());
  std::vector<DataSetRun> runs;
  for (const fs::path& set : sets) runs.push_back(prepare(c, model, set));
  return runs;
}

std::string compare_output(const void* got, const std::string& dtype,
                           const graph::HostTensor& want, double rtol) {
  std::ostringstream os;
  if (dtype != want.dtype().str()) {
    os << "the model's output is " << dtype << ", the test expects " << want.dtype().str();
    return os.str();
  }
  graph::HostTensor g(want.dtype(), want.shape());
  if (g.nbytes()) std::memcpy(g.raw(), got, g.nbytes());
  if (graph::is_float_dtype(want.dtype())) {
    const std::vector<double> a = g.to_f64(), b = want.to_f64();
    Closeness c = judge_closeness(
        a.size(), [&](size_t i) { return a[i]; }, [&](size_t i) { return b[i]; }, rtol);
    if (c.close) return "";
    os << c.mismatches << " of " << a.size() << " elements differ by more than " << rtol
       << ", first at " << c.first << ": got " << a[c.first] << ", want " << b[c.first];
    return os.str();
  }
  const std::vector<int64_t> a = g.to_i64(), b = want.to_i64();
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i] != b[i]) {
      os << "element " << i << ": got " << a[i] << ", want " << b[i];
      return os.str();
    }
  return "";
}

}  // namespace kiln::network::conformance
