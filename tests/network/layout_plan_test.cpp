// The joint layout choice of `kiln compile --records` (network/layout_plan.h) on the
// test networks, with hand-made records of two channel blocks per conv: when one block is
// clearly faster per layer the plan takes it; when the log says conversions are dear it keeps
// neighbours on one block where apply-history-best alone would convert; conversions are
// counted and costed; and the model compiled with the records still matches the reference.
#include <gtest/gtest.h>

#include <fstream>
#include <iostream>

#include "network/block_choices.h"
#include "network/extract_tasks.h"
#include "network/layout_plan.h"
#include "network/prepare_graph.h"
#include "schedules/registry.h"
#include "tests/network/network_check.h"
#include "tests/network/test_models.h"
#include "tuner/record.h"

namespace kiln::network::test {
namespace {

// Blocks every conv of the *_32 test networks offers (oc_bn is a multiple of the vector width).
const std::vector<int64_t> kBlocks = {16, 32};

tuner::TuningRecord record(const Target& t, const std::string& tpl, const schedules::Workload& w,
                           const schedules::Config& c, double cost_s) {
  tuner::TuningRecord r;
  r.target = t;
  r.template_name = tpl;
  r.workload = w;
  r.config = c;
  r.flops = 1;
  r.result.costs = {cost_s};
  r.result.device_key = "test";
  return r;
}

// The fallback of `tpl` with every channel-block knob it has set to `block` (nullopt when the
// space does not offer it).
std::optional<schedules::Config> with_block(const schedules::OpTemplate& tpl,
                                            const schedules::Workload& w, const Target& t,
                                            int64_t block) {
  schedules::Config c = tpl.fallback(w, t);
  for (const char* knob : {"ic_bn", "oc_bn", "c_bn"})
    if (c.has(knob)) c.set(knob, block);
  if (!tpl.space(w, t).contains(c)) return std::nullopt;
  return c;
}

struct Net {
  TempDir dir{"kiln-layout-plan-test"};
  std::string onnx = dir.file("net.onnx"), log = dir.file("net.jsonl");
  std::string bytes;
  Target target = target_from_name("host");
  std::vector<ExtractedTask> tasks;
  std::vector<tuner::TuningRecord> records;

  explicit Net(std::string model) : bytes(std::move(model)) {
    std::ofstream(onnx, std::ios::binary) << bytes;
    tasks = extract_tasks(onnx, target);
  }
  // Records of both blocks for every conv task: `cost(task index, block)`.
  template <typename CostFn>
  void add_conv_records(CostFn cost) {
    for (size_t i = 0; i < tasks.size(); ++i) {
      if (tasks[i].workload.op != "conv2d") continue;
      const schedules::OpTemplate& tpl = *tasks[i].templates.front();
      for (int64_t b : kBlocks)
        if (auto c = with_block(tpl, tasks[i].workload, target, b))
          records.push_back(record(target, tpl.name(), tasks[i].workload, *c, cost(i, b)));
    }
  }
  LayoutPlan plan() const {
    return plan_layouts(prepare_graph(onnx, {}).graph, target, records);
  }
  void write_log() const {
    std::ofstream f(log);
    for (const tuner::TuningRecord& r : records) f << tuner::record_to_json(r) << "\n";
  }
};

// The channel block a node's chosen config reads its input in.
int64_t input_block(const NodeChoice& c) {
  return c.config.has("c_bn") ? c.config["c_bn"] : c.config["ic_bn"];
}

TEST(LayoutPlan, TakesEachLayersClearlyFasterBlock) {
  Net net(conv_chain_32());
  // Alternating preferences, 1 ms apart: far more than any conversion of these small tensors.
  net.add_conv_records([](size_t task, int64_t b) { return (task % 2 == 0) == (b == 16) ? 1e-3 : 2e-3; });
  const LayoutPlan p = net.plan();
  std::cout << describe(p) << "\n";
  EXPECT_GE(p.calls_with_choices, 2u);
  // Every conv with records runs its faster one.
  int tuned = 0;
  for (const auto& [node, choice] : p.choices)
    if (!choice.untuned && choice.tpl->name().rfind("conv2d", 0) == 0) {
      EXPECT_DOUBLE_EQ(choice.cost_s, 1e-3) << node;
      ++tuned;
    }
  EXPECT_GE(tuned, 2);
  // Neighbours differ in block, so conversions were counted and costed.
  EXPECT_GT(p.chosen.conversions, 0);
  EXPECT_GT(p.chosen.conversion_s, 0);
  EXPECT_LE(p.chosen.cost_s, p.history_best.cost_s);
}

TEST(LayoutPlan, DearConversionsKeepNeighboursOnOneBlockAndOutputsStillMatch) {
  Net net(residual_block_32());
  // Block 32 is a little faster for the first conv only; block 16 for the second.
  net.add_conv_records([](size_t task, int64_t b) {
    return task == 0 ? (b == 32 ? 0.9e-3 : 1e-3) : (b == 16 ? 0.9e-3 : 1e-3);
  });
  ASSERT_GE(net.records.size(), 2u);
  // The log measured every conversion between the two blocks as slow (10 ms).
  const LayoutPlan cheap = net.plan();
  for (const schedules::Workload& w : cheap.unmeasured_conversions)
    for (const schedules::OpTemplate* tpl : schedules::templates_for(w, net.target))
      net.records.push_back(record(net.target, tpl->name(), w, tpl->fallback(w, net.target), 10e-3));
  const LayoutPlan p = net.plan();
  std::cout << describe(p) << "\n";
  EXPECT_TRUE(p.unmeasured_conversions.empty());
  EXPECT_LT(p.chosen.cost_s, p.history_best.cost_s);
  EXPECT_LT(p.chosen.conversions, p.history_best.conversions);
  // The two convs share one block: the second reads what the first writes.
  std::vector<const NodeChoice*> convs;
  for (const auto& [node, choice] : p.choices)
    if (choice.config.has("ic_bn")) convs.push_back(&choice);
  ASSERT_EQ(convs.size(), 2u);
  EXPECT_EQ(input_block(*convs[0]), input_block(*convs[1]));

  net.write_log();
  CompileReport r = expect_host_matches_reference(net.bytes, {}, {}, {net.log});
  EXPECT_NE(format_report(r).find("layout choice: "), std::string::npos);
}

// `kiln tune --layout-choices N`: the untuned blocks first, then common blocks the space
// offers (vector width, twice it), never the same pin twice, none for a kernel without blocks.
TEST(BlockChoices, UntunedBlocksFirstThenOfferedCommonBlocks) {
  const Target avx512 = target_from_name("x86-avx512");
  Net net(conv_chain_32());
  const ExtractedTask* wide = nullptr;  // conv 3x3 64->64
  for (const ExtractedTask& t : net.tasks)
    if (t.workload.op == "conv2d" && t.workload.params.at("C") == 64) wide = &t;
  ASSERT_NE(wide, nullptr);
  ExtractedTask task = *wide;
  task.blocks = schedules::Config({{"ic_bn", 64}, {"oc_bn", 64}});
  const std::vector<schedules::Config> pins = block_choices(task, avx512, 3);
  ASSERT_EQ(pins.size(), 3u);
  EXPECT_EQ(pins[0], task.blocks);
  EXPECT_EQ(pins[1], schedules::Config({{"ic_bn", 16}, {"oc_bn", 16}}));
  EXPECT_EQ(pins[2], schedules::Config({{"ic_bn", 32}, {"oc_bn", 32}}));
  EXPECT_EQ(block_choices(task, avx512, 1).size(), 1u);
  task.blocks = schedules::Config();
  EXPECT_EQ(block_choices(task, avx512, 3).size(), 1u);
}

}  // namespace
}  // namespace kiln::network::test
