// Task extraction on the test networks: the unique tunable workloads with their counts, the
// templates of each, and the same workloads an untuned `kiln compile` builds.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <set>

#include "network/compile_network.h"
#include "network/extract_tasks.h"
#include "schedules/registry.h"
#include "tests/network/test_models.h"

namespace kiln::network::test {
namespace {

struct Extracted {
  TempDir dir{"kiln-extract-test"};
  std::string onnx;
  std::vector<ExtractedTask> tasks;
  std::map<std::string, int> counts;  // workload -> occurrences
};

std::unique_ptr<Extracted> extract(const std::string& bytes, const std::string& target,
                                   const graph::ShapeBindings& shapes = {}) {
  auto out = std::make_unique<Extracted>();
  Extracted& e = *out;
  e.onnx = e.dir.file("net.onnx");
  std::ofstream(e.onnx, std::ios::binary) << bytes;
  e.tasks = extract_tasks(e.onnx, target_from_name(target), shapes);
  for (const ExtractedTask& t : e.tasks) {
    std::cout << t.occurrences << "x " << t.workload.str() << " :";
    for (const auto* tpl : t.templates) std::cout << " " << tpl->name();
    std::cout << "\n";
    EXPECT_TRUE(e.counts.emplace(t.workload.str(), t.occurrences).second) << t.workload.str();
  }
  return out;
}

const char* kConv3x3 =
    "conv2d C=16 DH=1 DW=1 H=10 KH=3 KW=3 N=1 O=16 PH=1 PW=1 SH=1 SW=1 W=10 groups=1 f32 +bias "
    "+relu";

TEST(ExtractTasks, RepeatedLayersAreOneTaskWithTheirCount) {
  auto e = extract(repeated_conv_chain(), "host");
  ASSERT_EQ(e->counts.count(kConv3x3), 1u);
  EXPECT_EQ(e->counts.at(kConv3x3), 3);
  // The blocked convolutions stay blocked between them: one conversion in, one out.
  EXPECT_EQ(e->counts.size(), 3u);
  int conversions = 0;
  for (const auto& [w, n] : e->counts)
    if (w.rfind("layout_transform", 0) == 0) conversions += n;
  EXPECT_EQ(conversions, 2);
}

TEST(ExtractTasks, ConvTasksCarryTheirUntunedBlocksWhichPinTheSearch) {
  auto e = extract(residual_block(), "host");
  int convs = 0;
  for (const ExtractedTask& t : e->tasks) {
    if (t.workload.op != "conv2d") continue;
    ++convs;
    ASSERT_TRUE(t.blocks.has("ic_bn") || t.blocks.has("c_bn")) << t.workload.str();
    // The untuned kernel is one the tune can measure: a config of its template's pinned space.
    ASSERT_NE(t.untuned_template, nullptr) << t.workload.str();
    EXPECT_TRUE(t.untuned_template->space(t.workload, target_from_name("host"))
                    .pinned(t.blocks)
                    .contains(t.untuned_config))
        << t.untuned_template->name() << " " << t.untuned_config.to_json();
    // Every template's space, pinned to those blocks, keeps only those blocks (where the
    // template offers them) and still has configs to search.
    for (const schedules::OpTemplate* tpl : t.templates) {
      schedules::ConfigSpace full = tpl->space(t.workload, target_from_name("host"));
      schedules::ConfigSpace pinned = full.pinned(t.blocks);
      EXPECT_GE(pinned.size(), 1u);
      EXPECT_LE(pinned.size(), full.size());
      for (const schedules::Knob& k : pinned.knobs())
        if (t.blocks.has(k.name) && full.contains(tpl->fallback(t.workload, target_from_name("host"))) &&
            k.choices.size() == 1)
          EXPECT_EQ(k.choices[0], t.blocks[k.name]) << tpl->name() << " " << k.name;
    }
  }
  EXPECT_GE(convs, 2);
}

TEST(ExtractTasks, FusedEpiloguesAndEveryApplicableTemplate) {
  auto e = extract(depthwise_pointwise_block(), "host");
  // BN folded into the depthwise conv's bias, Clip fused as relu6: no elementwise task left.
  for (const auto& [w, n] : e->counts) {
    EXPECT_EQ(w.find("clip"), std::string::npos) << w;
    EXPECT_EQ(w.find("batch_norm"), std::string::npos) << w;
  }
  const std::string depthwise =
      "conv2d C=24 DH=1 DW=1 H=14 KH=3 KW=3 N=1 O=24 PH=1 PW=1 SH=2 SW=2 W=14 groups=24 f32 "
      "+bias +relu6";
  EXPECT_EQ(e->counts.count(depthwise), 1u);
  for (const ExtractedTask& t : e->tasks) {
    const auto all = schedules::templates_for(t.workload, target_from_name("host"));
    std::vector<std::string> names;
    for (const auto* tpl : t.templates) names.push_back(tpl->name());
    if (t.workload.str() == depthwise) {
      // The depthwise templates only, the untuned one first: conv2d.nchwc would compute it
      // with block-diagonal weights (choose_template.h, tuning_templates).
      ASSERT_FALSE(names.empty());
      EXPECT_EQ(names.front(), "conv2d.depthwise");
      EXPECT_EQ(std::find(names.begin(), names.end(), "conv2d.nchwc"), names.end());
      for (const std::string& n : names) EXPECT_EQ(n.rfind("conv2d.depthwise", 0), 0u) << n;
    } else {
      // Every applicable template, in some order.
      EXPECT_EQ(std::set<const schedules::OpTemplate*>(t.templates.begin(), t.templates.end()),
                std::set<const schedules::OpTemplate*>(all.begin(), all.end()))
          << t.workload.str();
      EXPECT_EQ(t.templates.size(), all.size()) << t.workload.str();
    }
  }
}

TEST(ExtractTasks, ResidualBlockCounts) {
  auto e = extract(residual_block(), "host");
  std::map<std::string, int> ops;
  for (const ExtractedTask& t : e->tasks) ops[t.workload.op] += t.occurrences;
  EXPECT_EQ(ops["conv2d"], 2);  // one plain, one with the residual fused: two workloads
  EXPECT_EQ(e->counts.size(), 5u);
  EXPECT_EQ(ops["global_avg_pool2d"], 1);
}

// What an untuned compile builds is what extraction returns: every compiled kernel with a
// config space is a task, with the same number of calls.
TEST(ExtractTasks, MatchesWhatCompileBuilds) {
  for (const std::string& bytes :
       {repeated_conv_chain(), residual_block(), depthwise_pointwise_block()}) {
    auto e = extract(bytes, "host");
    CompileOptions o{e->onnx, target_from_name("host"), {}, {}, e->dir.file("out")};
    CompileReport r = compile_network(o);
    std::map<std::string, int> compiled;
    for (const Task& t : r.program.tasks)
      if (t.tpl->space(t.workload, o.target).size() > 1) compiled[t.workload.str()] += t.calls;
    EXPECT_EQ(compiled, e->counts);
  }
}

TEST(ExtractTasks, DenseNetworkWithBoundBatch) {
  auto e = extract(conv_bn_relu_pool_gemm_softmax(), "host", {{"batch", {1}}});
  EXPECT_EQ(e->counts.count("dense K=1024 M=1 N=10 f32 +bias"), 1u);
  EXPECT_EQ(e->counts.count("softmax M=1 N=10 f32"), 1u);
}

}  // namespace
}  // namespace kiln::network::test
