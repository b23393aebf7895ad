// `kiln tune MODEL.onnx` run as a user runs it: the real binary, the embedded farm, tiny
// budgets. A tuned network compiles with --records, reports its estimated latency, and its
// outputs still match the reference evaluator (host, and arm-neon under qemu); a tune killed
// with SIGKILL resumes from its log with nothing lost or measured twice; bad flags are one
// line and exit status 2.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "compiler/graph/evaluate.h"
#include "compiler/graph/onnx_import.h"
#include "kiln/compare.h"
#include "kiln/cpu_features.h"
#include "kiln/model.h"
#include "network/extract_tasks.h"
#include "rpc/farm/local_farm.h"
#include "runtime/process/kernel_exec.h"
#include "tests/native_targets.h"
#include "tests/network/test_models.h"
#include "tests/tools/kiln_cli.h"
#include "tuner/task_tuner.h"

namespace kiln::network::test {
namespace {

namespace fs = std::filesystem;
using tools::test::Output;
using tools::test::run;
using tools::test::valid_log;

const char* kQuick = " --min-repeat-ms 1 --repeat 2 --quiet";

struct Network {
  TempDir dir{"kiln-net-tune-test"};
  std::string onnx = dir.file("net.onnx"), log = dir.file("net.jsonl"), out = dir.file("out");
  std::map<std::string, graph::HostTensor> inputs, want;

  explicit Network(const std::string& bytes) {
    std::ofstream(onnx, std::ios::binary) << bytes;
    graph::Graph g = graph::import_onnx_bytes(bytes, "net.onnx");
    uint32_t seed = 7;
    for (const std::string& in : g.inputs)
      inputs[in] = graph::test::random_tensor(g.type_of(in)->dims(), seed++, 1.0f);
    want = graph::evaluate(g, inputs);
  }
};

void expect_close(const float* got, const graph::HostTensor& want, const std::string& name,
                  double rtol = 1e-4) {
  const float* w = want.data<float>();
  Closeness c = judge_closeness(
      want.numel(), [&](size_t i) { return double(got[i]); },
      [&](size_t i) { return double(w[i]); }, rtol);
  EXPECT_TRUE(c.close) << name << ": " << c.mismatches << " mismatches, first at " << c.first;
}

// Runs the compiled model in net.out on the network's inputs and compares every output
// (`rtol`: one quantum of a quantized model's output scale, where its integer path may round
// differently from the float reference).
void expect_model_matches(const Network& net, double rtol = 1e-4) {
  Model m = Model::load(net.out + "/model.so", net.out + "/model.params", 1);
  std::vector<const void*> in;
  for (const TensorInfo& t : m.inputs()) in.push_back(net.inputs.at(t.name).raw());
  std::vector<std::vector<float>> out;
  for (const TensorInfo& t : m.outputs()) out.emplace_back(t.bytes / 4);
  std::vector<void*> op;
  for (auto& v : out) op.push_back(v.data());
  m.run(std::span<const void* const>(in), std::span<void* const>(op));
  for (size_t i = 0; i < out.size(); ++i)
    expect_close(out[i].data(), net.want.at(m.outputs()[i].name), m.outputs()[i].name, rtol);
}

// How many times `needle` appears in `text` (lines of `kiln compile`'s report, say).
size_t occurrences(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

// Per task (template and workload), how often each config was measured (re-measurements of
// the best apart).
std::map<std::string, int> measure_counts(const std::vector<tuner::TuningRecord>& records) {
  std::map<std::string, int> n;
  for (const tuner::TuningRecord& r : records)
    if (r.result.message != tuner::kRemeasured)
      ++n[r.template_name + " " + r.workload.str() + " " + r.config.to_json()];
  return n;
}

TEST(NetworkTune, TunedNetworkCompilesWithRecordsAndMatchesTheReference) {
  Network net(repeated_conv_chain());
  Output o = run("tune " + net.onnx + " --target host --trials 12 --batch 4 --tuner xgb --log " +
                 net.log + kQuick);
  ASSERT_EQ(WEXITSTATUS(o.status), 0) << o.text;
  EXPECT_NE(o.text.find("estimated network latency: "), std::string::npos) << o.text;
  std::vector<tuner::TuningRecord> records = valid_log(net.log);
  ASSERT_GE(records.size(), 12u);
  // The heaviest task (the conv computed three times) is tuned first.
  EXPECT_EQ(records.front().workload.op, "conv2d");

  o = run("compile " + net.onnx + " --target host --records " + net.log + " -o " + net.out);
  ASSERT_EQ(WEXITSTATUS(o.status), 0) << o.text;
  EXPECT_NE(o.text.find("estimated latency from the records: "), std::string::npos) << o.text;
  // The conv called three times: one kernel, on whichever conv2d template its records chose.
  EXPECT_TRUE(o.text.find("3x  conv2d.nchwc  conv2d C=16") != std::string::npos ||
              o.text.find("3x  conv2d.winograd  conv2d C=16") != std::string::npos)
      << o.text;
  EXPECT_NE(o.text.find("[tuned "), std::string::npos) << o.text;
  // The search kept the untuned kernels' channel blocks (extract_tasks.h), so the tuned
  // network converts layouts exactly where the untuned one does: into the first conv and out
  // of the last.
  EXPECT_EQ(occurrences(o.text, "  LayoutTransform  "), 2u) << o.text;

  expect_model_matches(net);
}

// Each task of the untuned template measures first the very kernel an untuned compile builds
// (extract_tasks.h's untuned config), so `kiln compile --records` compiles a tuned record only
// when it was measured faster than that kernel.
TEST(NetworkTune, TheUntunedKernelIsMeasuredFirstAndAgainAtTheEnd) {
  Network net(repeated_conv_chain());
  Output o = run("tune " + net.onnx + " --target host --trials 24 --batch 4 --tuner random --log " +
                 net.log + kQuick);
  ASSERT_EQ(WEXITSTATUS(o.status), 0) << o.text;
  std::vector<tuner::TuningRecord> records = valid_log(net.log);
  size_t checked = 0;
  for (const ExtractedTask& t : extract_tasks(net.onnx, target_from_name("host"))) {
    ASSERT_NE(t.untuned_template, nullptr) << t.workload.str();
    auto first = std::find_if(records.begin(), records.end(), [&](const tuner::TuningRecord& r) {
      return r.template_name == t.untuned_template->name() && r.workload.str() == t.workload.str();
    });
    if (first == records.end()) continue;  // not reached within the budget
    EXPECT_EQ(first->config, t.untuned_config) << t.untuned_template->name() << " " << t.workload.str();
    // And again in the end's side-by-side re-measurement, which decides what is compiled
    // (tuner::settle_records): the kernel to beat is timed beside the best few.
    EXPECT_TRUE(std::any_of(records.begin(), records.end(), [&](const tuner::TuningRecord& r) {
      return r.result.message == tuner::kRemeasured && r.template_name == first->template_name &&
             r.workload.str() == t.workload.str() && r.config == t.untuned_config;
    })) << "untuned config not re-measured: " << t.untuned_template->name() << " " << t.workload.str();
    ++checked;
  }
  EXPECT_GE(checked, 2u) << o.text;
}

// Records that only confirm the untuned kernel: `kiln compile` says so for each such task
// ("kept the untuned config", and in model.json) rather than presenting it as a new kernel;
// a task whose record beat the untuned kernel reads as plainly tuned.
TEST(NetworkTune, ReportSaysWhichTasksKeptTheirUntunedConfig) {
  Network net(repeated_conv_chain());
  const Target host = target_from_name("host");
  auto record = [&](const ExtractedTask& t, const schedules::Config& c, double cost) {
    tuner::TuningRecord r;
    r.target = host;
    r.template_name = t.untuned_template->name();
    r.workload = t.workload;
    r.config = c;
    r.result.costs = {cost, cost};
    r.result.device_key = "local";
    r.flops = t.untuned_template->instantiate(t.workload, host, c).flops;
    return r;
  };
  std::vector<tuner::TuningRecord> records;
  std::string beaten;  // the one task where another config was measured faster
  size_t kept = 0;
  for (const ExtractedTask& t : extract_tasks(net.onnx, host)) {
    ASSERT_NE(t.untuned_template, nullptr) << t.workload.str();
    records.push_back(record(t, t.untuned_config, 1e-3));
    const schedules::ConfigSpace same_blocks =
        t.untuned_template->space(t.workload, host).pinned(t.blocks);
    if (!beaten.empty() || t.workload.op != "conv2d" || same_blocks.size() < 2) {
      ++kept;
      continue;
    }
    const schedules::Config other = same_blocks.at(same_blocks.at(0) == t.untuned_config ? 1 : 0);
    records.push_back(record(t, other, 1e-4));
    beaten = t.workload.str();
  }
  ASSERT_FALSE(beaten.empty());
  ASSERT_GE(kept, 1u);
  tuner::RecordWriter(net.log).append(records);

  Output o = run("compile " + net.onnx + " --target host --records " + net.log + " -o " + net.out);
  ASSERT_EQ(WEXITSTATUS(o.status), 0) << o.text;
  EXPECT_EQ(occurrences(o.text, ", kept the untuned config]"), kept) << o.text;
  EXPECT_NE(o.text.find(std::to_string(kept) + " of them kept their untuned config"),
            std::string::npos)
      << o.text;
  const size_t line = o.text.find(beaten + "  [tuned ");
  ASSERT_NE(line, std::string::npos) << o.text;
  EXPECT_EQ(o.text.substr(line, o.text.find('\n', line) - line).find("kept"), std::string::npos)
      << o.text;
  const nlohmann::json model = nlohmann::json::parse(farm::read_text(net.out + "/model.json"));
  size_t marked = 0;
  for (const nlohmann::json& k : model["kernels"]) marked += k["kept_untuned_config"].get<bool>();
  EXPECT_EQ(marked, kept);
  expect_model_matches(net);
}

// --layout-choices 2: each conv is tuned with two channel-block pins, the re-blocking
// conversions between them are measured into the log, and the network compiled with that log
// (its blocks chosen jointly, network/layout_plan.h) still matches the reference.
TEST(NetworkTune, LayoutChoicesTuneTwoBlocksPerConvAndCompileMatches) {
  Network net(conv_chain_32());
  Output o = run("tune " + net.onnx + " --target host --trials 30 --batch 2 --tuner random "
                 "--layout-choices 2 --log " + net.log + kQuick);
  ASSERT_EQ(WEXITSTATUS(o.status), 0) << o.text;
  std::map<std::string, std::set<int64_t>> blocks;  // conv workload -> output blocks measured
  bool reblocking = false;
  for (const tuner::TuningRecord& r : valid_log(net.log)) {
    if (r.workload.op == "conv2d" && r.config.has("oc_bn"))
      blocks[r.workload.str()].insert(r.config["oc_bn"]);
    if (r.workload.op == "layout_transform" && r.workload.params.at("direction") == 2)
      reblocking = true;
  }
  size_t with_two = 0;
  for (const auto& [w, b] : blocks) with_two += b.size() >= 2;
  EXPECT_GE(with_two, 2u) << o.text;
  EXPECT_TRUE(reblocking) << "no NCHW[a]c -> NCHW[b]c conversion measured\n" << o.text;

  o = run("compile " + net.onnx + " --target host --records " + net.log + " -o " + net.out);
  ASSERT_EQ(WEXITSTATUS(o.status), 0) << o.text;
  EXPECT_NE(o.text.find("layout choice: "), std::string::npos) << o.text;
  expect_model_matches(net);
}

// --dtype bf16: the tune measures the bf16 workloads, and compile --dtype bf16 finds them in
// the log (every half conv tuned), as the f32 ones above.
TEST(NetworkTune, Bf16TasksAreTheCompiledOnes) {
  if (!host_can_run(target_from_name(kiln::test::kX86Bf16)))
    GTEST_SKIP() << "this CPU cannot run " << kiln::test::kX86Bf16;
  Network net(repeated_conv_chain());
  Output o =
      run("tune " + net.onnx + " --target " + kiln::test::kX86Bf16 +
          " --dtype bf16 --trials 8 --batch 4 " + "--tuner random --log " + net.log + kQuick);
  ASSERT_EQ(WEXITSTATUS(o.status), 0) << o.text;
  std::vector<tuner::TuningRecord> records = valid_log(net.log);
  ASSERT_GE(records.size(), 8u);
  for (const tuner::TuningRecord& r : records)
    if (r.workload.op == "conv2d") EXPECT_EQ(r.workload.dtype, ir::DataType::bf16()) << r.workload.str();
  o = run("compile " + net.onnx + " --target " + kiln::test::kX86Bf16 + " --dtype bf16 --records " +
          net.log + " -o " + net.out);
  ASSERT_EQ(WEXITSTATUS(o.status), 0) << o.text;
  EXPECT_NE(o.text.find("conv2d.bf16.x86  conv2d C=16"), std::string::npos) << o.text;
  EXPECT_NE(o.text.find("[tuned "), std::string::npos) << o.text;
}

TEST(NetworkTune, ArmNeonUnderQemu) {
  std::vector<std::string> qemu = aarch64_qemu_prefix();
  if (qemu.empty() || !fs::exists(KILN_MODEL_APP_AARCH64))
    GTEST_SKIP() << "qemu-aarch64 or the cross-built model_app is missing";
  Network net(depthwise_pointwise_block());
  Output o = run("tune " + net.onnx + " --target arm-neon --trials 4 --batch 2 --workers 1 --log " +
                 net.log + kQuick);
  ASSERT_EQ(WEXITSTATUS(o.status), 0) << o.text;
  ASSERT_GE(valid_log(net.log).size(), 4u);
  o = run("compile " + net.onnx + " --target arm-neon --records " + net.log + " -o " + net.out);
  ASSERT_EQ(WEXITSTATUS(o.status), 0) << o.text;
  EXPECT_NE(o.text.find("[tuned "), std::string::npos) << o.text;

  const graph::HostTensor& x = net.inputs.at("x");
  const std::string in = net.dir.file("x.bin"), out = net.dir.file("y.bin");
  std::ofstream(in, std::ios::binary).write(reinterpret_cast<const char*>(x.raw()), x.nbytes());
  std::string cmd;
  for (const std::string& a : qemu) cmd += a + " ";
  cmd += std::string(KILN_MODEL_APP_AARCH64) + " " + net.out + " " + in + " --repeat 1 --save " +
         out + " > /dev/null";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  std::ifstream f(out, std::ios::binary);
  std::vector<float> got(net.want.at("y").numel());
  f.read(reinterpret_cast<char*>(got.data()), got.size() * 4);
  ASSERT_TRUE(f.good());
  expect_close(got.data(), net.want.at("y"), "y");
}

TEST(NetworkTune, KilledMidTuneResumesWithNothingLostOrMeasuredTwice) {
  Network net(repeated_conv_chain());
  const std::string args = "tune " + net.onnx + " --target host --tuner random --batch 4" + kQuick +
                           " --log " + net.log;
  {
    farm::ChildProcess tune({"sh", "-c", std::string("exec ") + KILN_BIN + " " + args + " --trials 400"},
                            net.log + ".out");
    // Let a few batches land, across tasks, then kill it without warning.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (tools::test::line_count(net.log) < 14 && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    tune.kill_now(SIGKILL);
    tune.wait_exit(10);
  }
  const std::vector<tuner::TuningRecord> before = tuner::load_records({net.log}).records;
  ASSERT_GE(before.size(), 12u) << farm::read_text(net.log + ".out");

  // The same command with a budget of what the log holds plus 8: 8 more trials.
  const size_t budget = measure_counts(before).size() + 8;
  Output o = run(args + " --trials " + std::to_string(budget));
  ASSERT_EQ(WEXITSTATUS(o.status), 0) << o.text;
  std::vector<tuner::TuningRecord> after = valid_log(net.log);
  // Nothing the killed run wrote is lost (a torn last line may have been cut).
  ASSERT_GE(after.size() + 1, before.size());
  for (size_t i = 0; i + 1 < before.size(); ++i)
    EXPECT_EQ(tuner::record_to_json(after[i]), tuner::record_to_json(before[i])) << i;
  const std::map<std::string, int> counts = measure_counts(after);
  EXPECT_GE(counts.size(), budget - 1);
  for (const auto& [config, n] : counts) EXPECT_EQ(n, 1) << config << " measured " << n << " times";
}

// The cost model is saved per template beside the log (no temporary left behind), a resumed
// run starts its tasks from it, and --transfer finds another network's models beside its log.
TEST(NetworkTune, CostModelsAreSavedPerTemplateAndLoadedOnResume) {
  Network net(repeated_conv_chain());
  const std::string args = "tune " + net.onnx + " --target host --tuner xgb --batch 4 "
                           "--min-repeat-ms 1 --repeat 2 --log ";
  // Enough trials that a task's search fits its model (it needs 8 samples of its own).
  Output first = run(args + net.log + " --trials 28 --quiet");
  ASSERT_EQ(WEXITSTATUS(first.status), 0) << first.text;
  std::set<std::string> models;
  for (const auto& e : fs::directory_iterator(net.dir.path())) {
    const std::string name = e.path().filename().string();
    EXPECT_EQ(name.find(".tmp"), std::string::npos) << "left behind: " << name;
    if (e.path().extension() == ".xgb") models.insert(name);
  }
  ASSERT_FALSE(models.empty()) << first.text;
  const std::string conv_model = *models.begin();
  EXPECT_EQ(conv_model.rfind("net.jsonl.", 0), 0u) << conv_model;

  Output resumed = run(args + net.log + " --trials 30");
  ASSERT_EQ(WEXITSTATUS(resumed.status), 0) << resumed.text;
  EXPECT_NE(resumed.text.find("loaded from " + net.dir.file(conv_model)), std::string::npos)
      << resumed.text;

  // Another run on a fresh log, transferring from this one: its models are found too.
  Output transferred = run(args + net.dir.file("other.jsonl") + " --trials 4 --transfer " + net.log);
  ASSERT_EQ(WEXITSTATUS(transferred.status), 0) << transferred.text;
  EXPECT_NE(transferred.text.find("loaded from " + net.dir.file(conv_model)), std::string::npos)
      << transferred.text;
}

TEST(NetworkTune, CtrlCStopsWithTheLogIntact) {
  Network net(repeated_conv_chain());
  farm::ChildProcess tune({"sh", "-c", std::string("exec ") + KILN_BIN + " tune " + net.onnx +
                                           " --target host --tuner random --batch 4 --trials 400" +
                                           kQuick + " --log " + net.log},
                          net.log + ".out");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (tools::test::line_count(net.log) < 8 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  tune.kill_now(SIGINT);
  const int status = tune.wait_exit(60);
  ASSERT_TRUE(WIFEXITED(status)) << farm::read_text(net.log + ".out");
  EXPECT_EQ(WEXITSTATUS(status), 130);
  EXPECT_NE(farm::read_text(net.log + ".out").find("holds every measurement so far"), std::string::npos);
  EXPECT_GE(valid_log(net.log).size(), 8u);
}

TEST(NetworkTune, StopsAtTheTimeBudget) {
  Network net(repeated_conv_chain());
  const auto t0 = std::chrono::steady_clock::now();
  Output o = run("tune " + net.onnx + " --target host --trials 100000 --batch 4 --time-budget 3s "
                 "--tuner random --log " + net.log + kQuick);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_EQ(WEXITSTATUS(o.status), 0) << o.text;
  EXPECT_LT(took, 60);
  EXPECT_LT(valid_log(net.log).size(), 1000u);
}

// `--precisions int8,f32` on a quantized model: both paths of each conv are tuned, the
// quantize/dequantize at the float path's edges measured, and compile --records picks each
// conv's path by those times (network/int8_paths.h), none left to the rule.
TEST(NetworkTune, PrecisionsInt8F32TimeBothPathsOfEveryQuantizedConv) {
  Network net(qdq_chain_model());
  Output o = run("tune " + net.onnx +
                 " --target host --precisions int8,f32 --trials 8 --batch 4 "
                 "--log " +
                 net.log + kQuick);
  ASSERT_EQ(WEXITSTATUS(o.status), 0) << o.text;
  EXPECT_NE(o.text.find("int8 against the float path"), std::string::npos) << o.text;
  std::set<std::string> kinds;
  for (const tuner::TuningRecord& r : valid_log(net.log))
    kinds.insert(r.workload.op + " " + r.workload.dtype.str());
  for (const char* kind : {"conv2d u8", "conv2d f32", "quantize u8", "dequantize u8"})
    EXPECT_TRUE(kinds.count(kind)) << kind;

  o = run("compile " + net.onnx + " --target host --records " + net.log + " -o " + net.out);
  ASSERT_EQ(WEXITSTATUS(o.status), 0) << o.text;
  EXPECT_NE(o.text.find("int8 paths by the records"), std::string::npos) << o.text;
  EXPECT_EQ(o.text.find("by the rule"), std::string::npos) << o.text;
  const nlohmann::json j = nlohmann::json::parse(std::ifstream(net.out + "/model.json"));
  ASSERT_EQ(j.at("int8_paths").size(), 2u) << j.dump();
  for (const auto& c : j.at("int8_paths")) {
    EXPECT_NE(c.at("takes"), "rule") << c.dump();
    EXPECT_GT(c.at("int8_ms").get<double>(), 0) << c.dump();
    EXPECT_GT(c.at("f32_ms").get<double>(), 0) << c.dump();
  }
  expect_model_matches(net, 0.0801);  // one quantum of the last output scale
}

// `--precisions` with a ranged batch: both forms timed at every size compile builds (one
// sample and each batch class), and a table for each.
TEST(NetworkTune, PrecisionsWithARangedBatchChooseAtEverySize) {
  Network net(qdq_chain_model());
  Output o = run("tune " + net.onnx +
                 " --target host --input-shape x=N,8,10,10 --range N=1..4 --batch-classes 4 "
                 "--precisions int8,f32 --trials 4 --batch 4 --log " +
                 net.log + kQuick);
  ASSERT_EQ(WEXITSTATUS(o.status), 0) << o.text;
  const size_t one = o.text.find("N = 1:"), four = o.text.find("N = 4:");
  ASSERT_NE(one, std::string::npos) << o.text;
  ASSERT_NE(four, std::string::npos) << o.text;
  for (size_t at : {one, four}) {
    const size_t line = o.text.find("int8 paths by the records (quantized convs): ", at);
    ASSERT_NE(line, std::string::npos) << o.text;
    const std::string summary = o.text.substr(line, o.text.find('\n', line) - line);
    EXPECT_EQ(summary.find("by the rule"), std::string::npos) << summary;
  }
  std::set<std::string> kinds;
  for (const tuner::TuningRecord& r : valid_log(net.log))
    kinds.insert(r.workload.op + " " + r.workload.dtype.str() +
                 " N=" + std::to_string(r.workload.param_or("N", 0)) +
                 " elements=" + std::to_string(r.workload.param_or("elements", 0)));
  // The float paths at batch 4: conv0's 16x10x10 output quantized, conv1's input dequantized
  for (const char* kind : {"conv2d u8 N=1 elements=0", "conv2d f32 N=1 elements=0",
                           "conv2d u8 N=4 elements=0", "conv2d f32 N=4 elements=0",
                           "dequantize u8 N=0 elements=6400", "quantize u8 N=0 elements=6400"})
    EXPECT_TRUE(kinds.count(kind)) << kind;
  o = run("compile " + net.onnx +
          " --target host --input-shape x=N,8,10,10 --range N=1..4 "
          "--batch-classes 4 --records " +
          net.log + " -o " + net.out);
  ASSERT_EQ(WEXITSTATUS(o.status), 0) << o.text;
  EXPECT_EQ(o.text.find("by the rule"), std::string::npos) << o.text;
}

// `--precisions f32,bf16` on a float model: each conv/dense layer's bf16 and f32 kernels (and
// the casts into bf16) timed; compile --dtype bf16 --records runs each layer in the faster
// (network/half_paths.h), none left to the rule, within bf16's tolerance of the reference.
TEST(NetworkTune, PrecisionsF32Bf16TimeEachLayerInBoth) {
  const Target target = target_from_name(kiln::test::kX86Bf16);
  if (!host_can_run(target)) GTEST_SKIP() << "this CPU cannot run " << target.name;
  Network net(conv_chain_32());
  Output o = run("tune " + net.onnx + " --target " + target.name +
                 " --precisions f32,bf16 --trials 8 --batch 4 --log " + net.log + kQuick);
  ASSERT_EQ(WEXITSTATUS(o.status), 0) << o.text;
  EXPECT_NE(o.text.find("bf16 against f32, per layer"), std::string::npos) << o.text;
  o = run("compile " + net.onnx + " --target " + target.name + " --dtype bf16 --records " +
          net.log + " -o " + net.out);
  ASSERT_EQ(WEXITSTATUS(o.status), 0) << o.text;
  EXPECT_NE(o.text.find("bf16 layers by the records: "), std::string::npos) << o.text;
  EXPECT_EQ(o.text.find("by the rule"), std::string::npos) << o.text;
  const nlohmann::json j = nlohmann::json::parse(std::ifstream(net.out + "/model.json"));
  ASSERT_EQ(j.at("half_paths").size(), 2u) << j.dump();  // the last layer stays f32
  for (const auto& l : j.at("half_paths")) EXPECT_NE(l.at("takes"), "rule") << l.dump();
  expect_model_matches(net, 3 * 2e-2);  // three layers, bf16's 2e-2 each where they run bf16
}

TEST(NetworkTune, BadFlagsAreOneLineAndExitTwo) {
  Network net(repeated_conv_chain());
  const std::string text = net.dir.file("model.txt");
  std::ofstream(text) << "not a model\n";
  const std::vector<std::string> cases = {
      "tune " + net.onnx + " --op dense --shape 8,8,8 --log x.jsonl",            // both
      "tune " + net.onnx + " --log x.jsonl --time-budget 5x",                    // bad duration
      "tune " + net.onnx + " --log x.jsonl --time-budget -3m",                   // negative
      "tune " + net.onnx + " --log x.jsonl --template conv2d.nchwc",             // one template
      "tune " + text + " --log x.jsonl",                                         // not .onnx
      "tune --op dense --shape 8,8,8 --log x.jsonl --time-budget 1m",            // not a network
      "tune --log x.jsonl --trials 4",                                           // nothing to tune
      "tune " + net.onnx + " --log x.jsonl --precisions int8,f32",               // not quantized
      "tune " + net.onnx + " --log x.jsonl --precisions int8",                   // one
      "tune " + net.onnx + " --log x.jsonl --precisions f32,i4",                 // no such type
      "tune " + net.onnx + " --log x.jsonl --dtype auto --precisions f32,int8",  // both
      "tune --op dense --shape 8,8,8 --log x.jsonl --precisions int8,f32",       // not a network
  };
  for (const std::string& c : cases) {
    Output o = run(c);
    EXPECT_TRUE(WIFEXITED(o.status)) << c;
    EXPECT_EQ(WEXITSTATUS(o.status), 2) << c << "\n" << o.text;
    EXPECT_EQ(std::count(o.text.begin(), o.text.end(), '\n'), 1) << c << "\n" << o.text;
  }
}

}  // namespace
}  // namespace kiln::network::test
