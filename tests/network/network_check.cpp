#include "tests/network/network_check.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "compiler/graph/evaluate.h"
#include "compiler/graph/onnx_import.h"
#include "kiln/compare.h"
#include "kiln/model.h"
#include "runtime/process/kernel_exec.h"
#include "tests/network/test_models.h"

namespace kiln::network::test {

namespace {

// A compiled model and the reference evaluator's outputs for random inputs.
struct Compiled {
  TempDir dir;
  CompileReport report;
  std::vector<std::string> input_order;  // graph inputs, in the model's order
  std::map<std::string, graph::HostTensor> inputs, want;
  std::string out() const { return dir.path() + "/out"; }
};

std::unique_ptr<Compiled> compile_with_reference(
    const std::string& bytes, const graph::ShapeBindings& shapes, const std::string& target,
    const std::map<std::string, graph::HostTensor>& given = {},
    const std::vector<std::string>& record_logs = {}, const PrecisionOptions& precision = {}) {
  auto c = std::make_unique<Compiled>();
  const std::string onnx = c->dir.path() + "/net.onnx";
  std::ofstream(onnx, std::ios::binary) << bytes;
  CompileOptions o{onnx, target_from_name(target), record_logs, shapes, c->out()};
  o.precision = precision;
  c->report = compile_network(o);
  std::cout << format_report(c->report);
  graph::Graph g = graph::import_onnx_bytes(bytes, "net.onnx");
  graph::bind_input_shapes(g, shapes);
  uint32_t seed = 7;
  for (const std::string& in : g.inputs) {
    c->input_order.push_back(in);
    auto it = given.find(in);
    c->inputs[in] = it != given.end() ? it->second
                                      : graph::test::random_tensor(g.type_of(in)->dims(), seed, 1.0f);
    ++seed;
  }
  c->want = graph::evaluate(g, c->inputs);
  return c;
}

// `got` and `want` of any one dtype, compared as numbers (integers and truth values exactly,
// in effect: they are whole numbers far apart).
void expect_close(const graph::HostTensor& got, const graph::HostTensor& want,
                  const std::string& name, double rtol = 1e-4) {
  ASSERT_EQ(got.numel(), want.numel()) << name;
  const std::vector<double> g = got.to_f64(), w = want.to_f64();
  Closeness c = judge_closeness(
      g.size(), [&](size_t k) { return g[k]; }, [&](size_t k) { return w[k]; }, rtol);
  EXPECT_TRUE(c.close) << name << ": " << c.mismatches << " mismatches, first at " << c.first
                       << " (got " << g[c.first] << ", want " << w[c.first] << ")";
}

}  // namespace

int map_conversions(const CompileReport& r) {
  int n = 0;
  for (const LayerRow& l : r.layers)
    n += l.op_type == "LayoutTransform" && (l.workload.find(" H=1 ") == std::string::npos ||
                                            l.workload.find(" W=1 ") == std::string::npos);
  return n;
}

CompileReport expect_host_matches_reference(const std::string& bytes,
                                            const graph::ShapeBindings& shapes,
                                            const std::map<std::string, graph::HostTensor>& given,
                                            const std::vector<std::string>& record_logs,
                                            double rtol) {
  std::unique_ptr<Compiled> c = compile_with_reference(bytes, shapes, "host", given, record_logs);
  Model m = Model::load(c->out() + "/model.so", c->out() + "/model.params", 1);
  std::vector<const void*> in_ptrs;
  for (const TensorInfo& t : m.inputs()) in_ptrs.push_back(c->inputs.at(t.name).raw());
  // Each output in the ONNX output's own type (the model converts int64 and bool outputs).
  std::vector<graph::HostTensor> got;
  std::vector<void*> out_ptrs;
  for (const TensorInfo& t : m.outputs()) {
    const graph::HostTensor& want = c->want.at(t.name);
    got.emplace_back(want.dtype(), want.shape());
    EXPECT_EQ(t.bytes, got.back().nbytes()) << t.name << " is " << t.dtype;
  }
  for (auto& o : got) out_ptrs.push_back(o.raw());
  m.run(std::span<const void* const>(in_ptrs), std::span<void* const>(out_ptrs));
  for (size_t i = 0; i < got.size(); ++i)
    expect_close(got[i], c->want.at(m.outputs()[i].name), m.outputs()[i].name, rtol);
  return c->report;
}

std::string expect_arm_neon_matches_reference(const std::string& bytes,
                                              const graph::ShapeBindings& shapes) {
  return expect_arm_matches_reference(bytes, "arm-neon", ir::DataType::f32(), true, 1e-4, shapes);
}

std::string expect_arm_matches_reference(const std::string& bytes, const std::string& target,
                                         ir::DataType dtype, bool keep_last_f32, double rtol,
                                         const graph::ShapeBindings& shapes) {
  std::vector<std::string> qemu = aarch64_qemu_prefix();
  if (qemu.empty() || !std::filesystem::exists(KILN_MODEL_APP_AARCH64))
    return "qemu-aarch64 or the cross-built model_app is missing";
  std::unique_ptr<Compiled> c =
      compile_with_reference(bytes, shapes, target, {}, {}, PrecisionOptions{dtype, keep_last_f32});
  std::string cmd;
  for (const std::string& a : qemu) cmd += a + " ";
  cmd += std::string(KILN_MODEL_APP_AARCH64) + " " + c->out();
  for (const std::string& name : c->input_order) {
    const graph::HostTensor& x = c->inputs.at(name);
    std::string path = c->dir.path() + "/" + std::to_string(&name - c->input_order.data()) + ".bin";
    std::ofstream(path, std::ios::binary)
        .write(reinterpret_cast<const char*>(x.raw()), static_cast<std::streamsize>(x.nbytes()));
    cmd += " " + path;
  }
  const std::string saved = c->dir.path() + "/y.bin";
  cmd += " --repeat 1 --save " + saved + " > /dev/null";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  const std::string& first = c->report.program.output_names.at(0);
  graph::HostTensor got(c->want.at(first).dtype(), c->want.at(first).shape());
  std::ifstream f(saved, std::ios::binary);
  f.read(reinterpret_cast<char*>(got.raw()), static_cast<std::streamsize>(got.nbytes()));
  EXPECT_TRUE(f.good()) << "model_app wrote no output";
  expect_close(got, c->want.at(first), first, rtol);
  return "";
}

std::vector<std::string> layer_ops(const CompileReport& report) {
  std::vector<std::string> ops;
  for (const LayerRow& l : report.layers) ops.push_back(l.op_type);
  return ops;
}

int count(const std::vector<std::string>& ops, const std::string& op) {
  return static_cast<int>(std::count(ops.begin(), ops.end(), op));
}

}  // namespace kiln::network::test
