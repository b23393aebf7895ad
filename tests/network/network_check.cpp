#include "tests/network/network_check.h"

#include <gtest/gtest.h>

#include <fstream>
#include <iostream>

#include "compiler/graph/evaluate.h"
#include "compiler/graph/onnx_import.h"
#include "kiln/compare.h"
#include "kiln/model.h"
#include "tests/network/test_models.h"

namespace kiln::network::test {

CompileReport expect_host_matches_reference(const std::string& bytes,
                                            const graph::ShapeBindings& shapes) {
  TempDir dir;
  const std::string onnx = dir.path() + "/net.onnx", out = dir.path() + "/out";
  std::ofstream(onnx, std::ios::binary) << bytes;
  CompileReport report = compile_network({onnx, target_from_name("host"), {}, shapes, out});
  std::cout << format_report(report);

  graph::Graph g = graph::import_onnx_bytes(bytes, "net.onnx");
  graph::bind_input_shapes(g, shapes);
  std::map<std::string, graph::HostTensor> inputs;
  uint32_t seed = 7;
  for (const std::string& in : g.inputs)
    inputs[in] = graph::test::random_tensor(g.type_of(in)->dims(), seed++, 1.0f);
  std::map<std::string, graph::HostTensor> want = graph::evaluate(g, inputs);

  Model m = Model::load(out + "/model.so", out + "/model.params", 1);
  std::vector<const void*> in_ptrs;
  for (const TensorInfo& t : m.inputs()) in_ptrs.push_back(inputs.at(t.name).raw());
  std::vector<std::vector<float>> got;
  std::vector<void*> out_ptrs;
  for (const TensorInfo& t : m.outputs()) got.emplace_back(t.bytes / 4);
  for (auto& o : got) out_ptrs.push_back(o.data());
  m.run(std::span<const void* const>(in_ptrs), std::span<void* const>(out_ptrs));
  for (size_t i = 0; i < got.size(); ++i) {
    const std::string& name = m.outputs()[i].name;
    const graph::HostTensor& w = want.at(name);
    EXPECT_EQ(static_cast<int64_t>(got[i].size()), w.numel()) << name;
    if (static_cast<int64_t>(got[i].size()) != w.numel()) continue;
    const float* wp = w.data<float>();
    Closeness c = judge_closeness(
        got[i].size(), [&](size_t k) { return double(got[i][k]); },
        [&](size_t k) { return double(wp[k]); }, 1e-4);
    EXPECT_TRUE(c.close) << name << ": " << c.mismatches << " mismatches, first at " << c.first
                         << " (got " << got[i][c.first] << ", want " << wp[c.first] << ")";
  }
  return report;
}

std::vector<std::string> layer_ops(const CompileReport& report) {
  std::vector<std::string> ops;
  for (const LayerRow& l : report.layers) ops.push_back(l.op_type);
  return ops;
}

}  // namespace kiln::network::test
