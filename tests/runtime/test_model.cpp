// The hand-built test model of test_model.h.
#include "tests/runtime/test_model.h"

#include <algorithm>
#include <cstring>

#include "compiler/ir/op.h"
#include "kiln/params.h"

namespace kiln::testing {
namespace {

using ir::Buffer;
using ir::DataType;
using ir::Expr;
using ir::LoweredFunc;
using ir::Var;

constexpr int64_t kN = TestModel::kSize;

Buffer f32_buffer(const char* name) {
  return ir::make_buffer(name, DataType::f32(), {kN});
}
Expr at(const Buffer& b, const Expr& i) {
  return ir::make_load(b, {i});
}
ir::Stmt over_all(const Var& i, ir::Stmt body) {
  return ir::make_for(i, 0, kN, ir::ForKind::Serial, std::move(body));
}

// out[i] = a[i] op b[i] for the elementwise kernels.
LoweredFunc binary_kernel(const char* name, bool multiply) {
  Buffer a = f32_buffer("A"), b = f32_buffer("B"), out = f32_buffer("Out");
  Var i("i");
  Expr value = multiply ? at(a, i) * at(b, i) : at(a, i) + at(b, i);
  return {name, {a, b, out}, over_all(i, ir::make_store(out, value, {i}))};
}

LoweredFunc relu_kernel() {
  Buffer in = f32_buffer("In"), out = f32_buffer("Out");
  Var r("r"), c("c");
  Expr idx = r * TestModel::kCols + c;
  ir::Stmt row = ir::make_for(
      c, 0, TestModel::kCols, ir::ForKind::Serial,
      ir::make_store(out, ir::max(at(in, idx), ir::make_float(DataType::f32(), 0)), {idx}));
  return {"relu", {in, out}, ir::make_for(r, 0, TestModel::kRows, ir::ForKind::Parallel, row)};
}

LoweredFunc copy_kernel() {
  Buffer in = f32_buffer("In"), out = f32_buffer("Out");
  Var i("i");
  return {"copy", {in, out}, over_all(i, ir::make_store(out, at(in, i), {i}))};
}

std::vector<float> weights(int seed, float scale, float shift) {
  std::vector<float> w(kN);
  for (int64_t i = 0; i < kN; ++i)
    w[i] = scale * static_cast<float>((i * 13 + seed * 7) % 23) / 23.0f + shift;
  return w;
}

const float* param_floats(const TestModel& m, uint64_t offset) {
  return reinterpret_cast<const float*>(m.params.data() + offset);
}

}  // namespace

TestModel make_test_model(const std::string& name, int seed) {
  TestModel m;
  m.kernels = {binary_kernel("add_bias", false), relu_kernel(), binary_kernel("scale", true),
               copy_kernel()};
  ParamsBuilder params;
  const std::vector<float> bias = weights(seed, 2.0f, -1.0f), scale = weights(seed + 1, 1.5f, 0.5f);
  const uint64_t bias_at = params.add(bias.data(), bias.size() * sizeof(float));
  const uint64_t scale_at = params.add(scale.data(), scale.size() * sizeof(float));
  m.params = params.payload();

  using codegen::input_arg, codegen::output_arg, codegen::params_arg, codegen::workspace_arg;
  const uint64_t bytes = kN * sizeof(float);
  codegen::ExecutorPlan& p = m.plan;
  p.name = name;
  p.inputs = {{"x", DataType::f32(), {TestModel::kRows, TestModel::kCols}}};
  p.outputs = {{"y", DataType::f32(), {TestModel::kRows, TestModel::kCols}},
               {"pre", DataType::f32(), {TestModel::kRows, TestModel::kCols}}};
  p.workspace_bytes = 2 * bytes;
  p.params_bytes = m.params.size();
  p.params_checksum = params.checksum();
  p.steps = {{"add_bias", {input_arg(0), params_arg(bias_at), workspace_arg(0)}},
             {"relu", {workspace_arg(0), workspace_arg(bytes)}},
             {"scale", {workspace_arg(bytes), params_arg(scale_at), output_arg(0)}},
             {"copy", {workspace_arg(0), output_arg(1)}}};
  return m;
}

void reference_outputs(const TestModel& m, const std::vector<float>& x, std::vector<float>* y,
                       std::vector<float>* pre) {
  const float* bias = param_floats(m, m.plan.steps[0].args[1].offset);
  const float* scale = param_floats(m, m.plan.steps[2].args[1].offset);
  y->assign(kN, 0);
  pre->assign(kN, 0);
  for (int64_t i = 0; i < kN; ++i) {
    (*pre)[i] = x[i] + bias[i];
    (*y)[i] = std::max((*pre)[i], 0.0f) * scale[i];
  }
}

std::vector<float> test_input(int seed) {
  std::vector<float> x(kN);
  for (int64_t i = 0; i < kN; ++i) x[i] = static_cast<float>((i * 5 + seed) % 17) / 4.0f - 2.0f;
  return x;
}

void write_artifact(const TestModel& m, const Target& target, const std::string& dir) {
  codegen::build_model(m.kernels, m.plan, target, dir + "/model.so");
  write_params_file(dir + "/model.params", m.params.data(), m.params.size());
}

}  // namespace kiln::testing
