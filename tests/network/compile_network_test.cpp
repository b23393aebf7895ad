// The network compiler end to end: compile small networks for the host (and arm-neon under
// qemu when the cross-built model_app and qemu are there), run them and compare every output
// with the reference evaluator by kiln's f32 rule (1e-4 relative).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "compiler/graph/evaluate.h"
#include "compiler/graph/onnx_import.h"
#include "network/compile_network.h"
#include "kiln/compare.h"
#include "kiln/model.h"
#include "runtime/process/kernel_exec.h"
#include "tests/network/test_models.h"
#include "tuner/cpu_match.h"
#include "tuner/record.h"
#include "tuner/records.h"
#include "kiln/params.h"

namespace kiln::network::test {
namespace {

namespace fs = std::filesystem;

struct Compiled {
  TempDir dir;
  CompileReport report;
  std::map<std::string, graph::HostTensor> inputs, want;
};

std::unique_ptr<Compiled> compile_and_reference(const std::string& bytes, const std::string& target,
                                                const graph::ShapeBindings& shapes = {},
                                                const std::vector<std::string>& records = {}) {
  auto c = std::make_unique<Compiled>();
  std::string onnx = c->dir.path() + "/net.onnx";
  std::ofstream(onnx, std::ios::binary) << bytes;
  CompileOptions o{onnx, target_from_name(target), records, shapes, c->dir.path() + "/out"};
  c->report = compile_network(o);
  graph::Graph g = graph::import_onnx_bytes(bytes, "net.onnx");
  graph::bind_input_shapes(g, shapes);
  uint32_t seed = 100;
  for (const std::string& in : g.inputs)
    c->inputs[in] = graph::test::random_tensor(g.type_of(in)->dims(), seed++, 1.0f);
  c->want = graph::evaluate(g, c->inputs);
  std::cout << format_report(c->report);
  return c;
}

void expect_close(const std::vector<float>& got, const graph::HostTensor& want, const std::string& name) {
  ASSERT_EQ(static_cast<int64_t>(got.size()), want.numel()) << name;
  const float* w = want.data<float>();
  Closeness c = judge_closeness(
      got.size(), [&](size_t i) { return double(got[i]); }, [&](size_t i) { return double(w[i]); },
      1e-4);
  EXPECT_TRUE(c.close) << name << ": " << c.mismatches << " mismatches, first at " << c.first
                       << " (got " << got[c.first] << ", want " << w[c.first] << ")";
}

// Runs the host build with the runtime and compares; prints the latency.
void run_on_host(const Compiled& c) {
  Model m = Model::load(c.dir.path() + "/out/model.so", c.dir.path() + "/out/model.params", 1);
  std::vector<const void*> in;
  for (const TensorInfo& t : m.inputs()) in.push_back(c.inputs.at(t.name).raw());
  std::vector<std::vector<float>> out;
  for (const TensorInfo& t : m.outputs()) out.emplace_back(t.bytes / 4);
  std::vector<void*> op;
  for (auto& o : out) op.push_back(o.data());
  std::vector<double> ms;
  for (int r = 0; r < 20; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    m.run(std::span<const void* const>(in), std::span<void* const>(op));
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  std::cout << "[host latency] median " << ms[ms.size() / 2] << " ms over 20 runs, 1 thread\n";
  for (size_t i = 0; i < out.size(); ++i) expect_close(out[i], c.want.at(m.outputs()[i].name), m.outputs()[i].name);
}

TEST(CompileNetwork, ConvBnReluPoolGemmSoftmaxOnHost) {
  auto c = compile_and_reference(conv_bn_relu_pool_gemm_softmax(), "host", {{"batch", {1}}});
  EXPECT_EQ(c->report.bn_folded, 1);
  EXPECT_GE(c->report.epilogues_fused, 1);
  EXPECT_TRUE(fs::exists(c->dir.path() + "/out/model.json"));
  run_on_host(*c);
}

TEST(CompileNetwork, ResidualBlockOnHost) {
  auto c = compile_and_reference(residual_block(), "host");
  EXPECT_EQ(c->report.bn_folded, 2);
  EXPECT_GE(c->report.epilogues_fused, 3);  // relu, residual add, relu
  run_on_host(*c);
}

TEST(CompileNetwork, DepthwisePointwiseRelu6OnHost) {
  auto c = compile_and_reference(depthwise_pointwise_block(), "host");
  EXPECT_EQ(c->report.bn_folded, 1);
  EXPECT_EQ(c->report.epilogues_fused, 2);
  // A chain: each buffer is dead two steps after it is written, so the arena reuses bytes.
  const NetworkProgram& p = c->report.program;
  EXPECT_LT(p.workspace_bytes, p.naive_workspace_bytes);
  run_on_host(*c);
}

TEST(CompileNetwork, SharedKernelsAreBuiltOnce) {
  auto c = compile_and_reference(residual_block(), "host");
  const NetworkProgram& p = c->report.program;
  std::set<std::string> names;
  int calls = 0;
  for (const Task& t : p.tasks) {
    EXPECT_TRUE(names.insert(t.kernel).second) << t.kernel;
    calls += t.calls;
  }
  EXPECT_EQ(calls, static_cast<int>(p.steps.size()));
}

// The layout conversions of a program by direction (0: to blocked, 1: to NCHW, 2: re-block).
std::map<int64_t, int> conversions(const NetworkProgram& p) {
  std::map<int64_t, int> n;
  for (const Step& s : p.steps)
    if (s.op_type == "LayoutTransform") ++n[p.tasks[s.task].workload.param("direction")];
  return n;
}

// The depthwise layer's task of a compiled depthwise_pointwise_block (nullptr if none).
const Task* depthwise_task(const CompileReport& r) {
  for (const Task& t : r.program.tasks)
    if (t.tpl->name() == "conv2d.depthwise") return &t;
  return nullptr;
}

// Records for the depthwise layer of depthwise_pointwise_block() on this machine: the records
// tests below write logs of two of its configs.
struct DepthwiseRecords {
  std::unique_ptr<Compiled> untuned = compile_and_reference(depthwise_pointwise_block(), "host");
  const Task* dw = depthwise_task(untuned->report);
  Target host = target_from_name("host");
  schedules::ConfigSpace space = dw ? dw->tpl->space(dw->workload, host) : schedules::ConfigSpace();

  // A record of the config at `index` of the space, measured at `cost` seconds.
  tuner::TuningRecord record(uint64_t index, double cost) const {
    tuner::TuningRecord r{host, dw->tpl->name(), dw->workload, space.at(index), {}, 1e6};
    r.result.costs = {cost};
    return r;
  }
  // The config the depthwise layer is built with from these logs.
  schedules::Config config_in(const CompileReport& r) const {
    for (const Task& t : r.program.tasks)
      if (t.workload.str() == dw->workload.str()) return t.config;
    return schedules::Config();
  }
  // A compile of the block with these options (model, target and output filled in).
  CompileReport compile(CompileOptions o) const {
    TempDir dir("kiln-records");
    o.model_path = dir.file("net.onnx");
    std::ofstream(o.model_path, std::ios::binary) << depthwise_pointwise_block();
    o.target = host;
    o.out_dir = dir.file("out");
    return compile_network(o);
  }
};

// A tuned depthwise layer whose channel block differs from its producer's: the value is
// re-blocked in one kernel (not through NCHW), and the next conv reads the new block.
TEST(CompileNetwork, ATunedBlockIsReblockedDirectly) {
  auto untuned = compile_and_reference(depthwise_pointwise_block(), "host");
  const Task* dw = depthwise_task(untuned->report);
  ASSERT_NE(dw, nullptr);
  const Target host = target_from_name("host");
  schedules::Config cfg = dw->config;
  const schedules::ConfigSpace space = dw->tpl->space(dw->workload, host);
  for (const schedules::Knob& k : space.knobs())
    if (k.name == "c_bn")
      for (int64_t b : k.choices)
        if (b != dw->config["c_bn"]) cfg.set("c_bn", b);
  if (cfg == dw->config) GTEST_SKIP() << "the depthwise layer has one channel block here ";
  tuner::TuningRecord r{host, dw->tpl->name(), dw->workload, cfg, {}, 1e6};
  r.result.costs = {1e-4};
  std::string log = untuned->dir.path() + "/tuned.jsonl";
  std::ofstream(log) << tuner::record_to_json(r) << "\n";

  auto c = compile_and_reference(depthwise_pointwise_block(), "host", {}, {log});
  std::map<int64_t, int> before = conversions(untuned->report.program);
  std::map<int64_t, int> after = conversions(c->report.program);
  EXPECT_EQ(before[2], 0);
  EXPECT_EQ(after[2], 1);
  EXPECT_EQ(after[0], before[0]);
  EXPECT_EQ(after[1], before[1]);
  run_on_host(*c);
}

// The image of a 3-channel stem is read where it lies: blocks of one channel are NCHW's
// bytes, so no conversion to blocks runs before the first conv (one did, 80 us at 224x224).
TEST(CompileNetwork, AnImageStemReadsItsNchwInput) {
  auto c = compile_and_reference(conv_bn_relu_pool_gemm_softmax(), "host", {{"batch", {2}}});
  EXPECT_EQ(conversions(c->report.program)[0], 0);
  for (const Task& t : c->report.program.tasks)
    if (t.workload.op == "conv2d") EXPECT_EQ(t.config["ic_bn"], 1) << t.workload.str();
  run_on_host(*c);
}

std::string file_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

// The same ONNX file, flags and records give the same bytes in every file of the artifact,
// compiled in two folders; model.json names the log (file name and checksum) and the record
// each tuned kernel was built from.
TEST(CompileNetwork, TheSameInputsGiveTheSameBytesAndModelJsonNamesTheRecords) {
  auto untuned = compile_and_reference(depthwise_pointwise_block(), "host");
  const Task* dw = depthwise_task(untuned->report);
  ASSERT_NE(dw, nullptr);
  tuner::TuningRecord r{target_from_name("host"), dw->tpl->name(), dw->workload, dw->config, {},
                        1e6};
  r.result.costs = {1e-4};
  const std::string log = untuned->dir.path() + "/tuned.jsonl";
  std::ofstream(log) << tuner::record_to_json(r) << "\n";

  auto a = compile_and_reference(depthwise_pointwise_block(), "host", {}, {log});
  auto b = compile_and_reference(depthwise_pointwise_block(), "host", {}, {log});
  for (const char* f : {"model.so", "model.params", "model.a", "model.h", "model.json"}) {
    const std::string x = file_bytes(a->dir.path() + "/out/" + f);
    EXPECT_FALSE(x.empty()) << f;
    EXPECT_TRUE(x == file_bytes(b->dir.path() + "/out/" + f)) << f << " differs";
  }
  const nlohmann::json j = nlohmann::json::parse(file_bytes(a->dir.path() + "/out/model.json"));
  ASSERT_TRUE(j.contains("records")) << j.dump(2);
  ASSERT_EQ(j["records"]["logs"].size(), 1u);
  EXPECT_EQ(j["records"]["logs"][0]["file"], "tuned.jsonl");
  EXPECT_EQ(j["records"]["logs"][0]["checksum"].get<std::string>().size(), 16u);
  ASSERT_EQ(j["records"]["kernels"].size(), 1u);
  const std::string line = tuner::record_to_json(r);
  char want[17];
  std::snprintf(want, sizeof want, "%016llx",
                static_cast<unsigned long long>(params_checksum(line.data(), line.size())));
  EXPECT_EQ(j["records"]["kernels"][0]["record"], want);
  EXPECT_EQ(j["records"]["kernels"][0]["kernel"].get<std::string>().find("depthwise") !=
                std::string::npos,
            true);
  // Without records there is no provenance to name.
  EXPECT_FALSE(nlohmann::json::parse(file_bytes(untuned->dir.path() + "/out/model.json"))
                   .contains("records"));
}

// Pins (kiln records pin) win over the logs for their workloads: a faster config that later
// tuning found for the pinned depthwise layer is not built.
TEST(CompileNetwork, PinnedConfigsWinOverLaterRecords) {
  DepthwiseRecords d;
  ASSERT_NE(d.dw, nullptr);
  ASSERT_GE(d.space.size(), 2u);
  auto log_of = [&](uint64_t index, double cost, const std::string& name) {
    const std::string path = d.untuned->dir.path() + "/" + name;
    std::ofstream(path) << tuner::record_to_json(d.record(index, cost)) << "\n";
    return path;
  };
  const std::string pins = log_of(0, 1e-4, "pins.jsonl"), later = log_of(1, 1e-6, "later.jsonl");
  auto config_of_dw = [&](const std::vector<std::string>& records,
                          const std::vector<std::string>& pin_logs) {
    CompileOptions o;
    o.record_logs = records;
    o.pin_logs = pin_logs;
    return d.config_in(d.compile(o));
  };
  EXPECT_EQ(config_of_dw({later}, {}), d.space.at(1));
  EXPECT_EQ(config_of_dw({later}, {pins}), d.space.at(0));
}

// A log merged from two machines: a compile for this machine builds the config measured here,
// though another CPU measured a faster one, and says which CPU's records it took; a workload
// only the other CPU measured falls back to its record, with a warning naming it.
TEST(CompileNetwork, ThisMachinesRecordsWinInAMergedLog) {
  DepthwiseRecords d;
  ASSERT_NE(d.dw, nullptr);
  ASSERT_GE(d.space.size(), 2u);
  tuner::MeasuredOn here = tuner::this_machine_measured_on(), elsewhere = here;
  elsewhere.model = "Imaginary CPU 9000";
  auto line = [&](uint64_t index, double cost, const tuner::MeasuredOn& on) {
    tuner::TuningRecord r = d.record(index, cost);
    r.result.measured_on = on;
    return tuner::record_to_json(r) + "\n";
  };
  const std::string merged = d.untuned->dir.path() + "/team.jsonl",
                    theirs = d.untuned->dir.path() + "/theirs.jsonl";
  std::ofstream(merged) << line(1, 1e-6, elsewhere) << line(0, 1e-4, here);
  std::ofstream(theirs) << line(1, 1e-6, elsewhere);
  auto compiled = [&](const std::string& log, const std::string& cpu) {
    CompileOptions o;
    o.record_logs = {log};
    o.records_cpu = cpu;
    return d.compile(o);
  };
  const CompileReport mine = compiled(merged, "auto");
  EXPECT_EQ(d.config_in(mine), d.space.at(0));
  EXPECT_NE(mine.records_use.find("records of " + here.cpu() + " (this machine) for 1 workloads"),
            std::string::npos)
      << mine.records_use;
  EXPECT_EQ(d.config_in(compiled(merged, "any")), d.space.at(1));
  EXPECT_EQ(d.config_in(compiled(merged, "Imaginary")), d.space.at(1));
  const CompileReport fallback = compiled(theirs, "auto");
  EXPECT_EQ(d.config_in(fallback), d.space.at(1));
  EXPECT_NE(fallback.records_use.find("use those of a CPU with the same features: " +
                                      elsewhere.cpu()),
            std::string::npos)
      << fallback.records_use;
}

// The tune's last word on a kernel reaches the artifact: a config that beat the untuned one
// beyond noise is built, with its verdict and spread in the report and model.json; one within
// noise of it is not.
TEST(CompileNetwork, TheUntunedConfigStaysUnlessBeatenBeyondNoise) {
  DepthwiseRecords d;
  ASSERT_NE(d.dw, nullptr);
  ASSERT_GE(d.space.size(), 2u);
  const schedules::Config untuned = d.dw->config;
  const uint64_t other = d.space.at(0) == untuned ? 1 : 0;
  auto remeasured = [&](const schedules::Config& c, std::vector<double> costs) {
    tuner::TuningRecord r = d.record(0, 0);
    r.config = c;
    r.result.costs = std::move(costs);
    r.result.message = tuner::kRemeasured;
    return tuner::record_to_json(r) + "\n";
  };
  auto trial = [&](const schedules::Config& c) {
    tuner::TuningRecord r = d.record(0, 1e-4);
    r.config = c;
    return tuner::record_to_json(r) + "\n";
  };
  const std::vector<double> slow = {1.00e-4, 1.03e-4, 1.05e-4, 1.08e-4, 1.10e-4, 1.12e-4};
  const std::string clear = d.untuned->dir.path() + "/clear.jsonl",
                    noisy = d.untuned->dir.path() + "/noisy.jsonl";
  std::ofstream(clear) << trial(untuned) << trial(d.space.at(other)) << remeasured(untuned, slow)
                       << remeasured(d.space.at(other), {0.80e-4, 0.81e-4, 0.83e-4, 0.84e-4,
                                                         0.86e-4, 0.90e-4});
  std::ofstream(noisy) << trial(untuned) << trial(d.space.at(other)) << remeasured(untuned, slow)
                       << remeasured(d.space.at(other), {0.99e-4, 1.02e-4, 1.06e-4, 1.07e-4,
                                                         1.09e-4, 1.13e-4});
  CompileOptions o;
  o.record_logs = {clear};
  const CompileReport gained = d.compile(o);
  EXPECT_EQ(d.config_in(gained), d.space.at(other));
  const std::string text = format_report(gained);
  EXPECT_NE(text.find(", spread 12%, 1.28x faster than the untuned config (p=0.0011, 6 vs 6 times)]"),
            std::string::npos)
      << text;
  o.record_logs = {noisy};
  const CompileReport kept = d.compile(o);
  EXPECT_EQ(d.config_in(kept), untuned);
  const std::string kept_text = format_report(kept);
  EXPECT_NE(kept_text.find(", within noise of the untuned config ("), std::string::npos) << kept_text;
  EXPECT_NE(kept_text.find("6 vs 6 times), kept the untuned config]"), std::string::npos)
      << kept_text;
}

TEST(CompileNetwork, ArmNeonUnderQemu) {
  std::vector<std::string> qemu = aarch64_qemu_prefix();
  if (qemu.empty() || !fs::exists(KILN_MODEL_APP_AARCH64))
    GTEST_SKIP() << "qemu-aarch64 or the cross-built model_app is missing";
  auto c = compile_and_reference(depthwise_pointwise_block(), "arm-neon");
  const graph::HostTensor& x = c->inputs.at("x");
  std::string in = c->dir.path() + "/x.bin", out = c->dir.path() + "/y.bin";
  std::ofstream(in, std::ios::binary).write(reinterpret_cast<const char*>(x.raw()), x.nbytes());
  std::string cmd;
  for (const std::string& a : qemu) cmd += a + " ";
  cmd += std::string(KILN_MODEL_APP_AARCH64) + " " + c->dir.path() + "/out " + in +
         " --repeat 1 --save " + out + " > /dev/null";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  std::ifstream f(out, std::ios::binary);
  std::vector<float> got(c->want.at("y").numel());
  f.read(reinterpret_cast<char*>(got.data()), got.size() * 4);
  ASSERT_TRUE(f.good());
  expect_close(got, c->want.at("y"), "y");
}

}  // namespace
}  // namespace kiln::network::test
