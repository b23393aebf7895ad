// Task extraction on the real torchvision networks: the unique conv workloads and their counts
// are what the architectures' own tables say they are. The expected lists are built from those
// tables (torchvision's ResNet-18 BasicBlock stages and MobileNetV2 inverted-residual settings),
// with the epilogues the fusion passes give each conv: ReLU (or ReLU6) after a conv, the
// residual add fused into the conv that ends a block, none after a projection or downsample.
#include <gtest/gtest.h>

#include <filesystem>
#include <iostream>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "network/extract_tasks.h"
#include "compiler/target/target.h"

namespace kiln::network::test {
namespace {

// C, O, H (= W), K, stride, groups, epilogue.
using ConvKey = std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, std::string>;
using ConvCounts = std::map<ConvKey, int>;

struct Extraction {
  ConvCounts convs;
  std::map<std::string, int> others;  // op -> occurrences, every other op
  std::vector<schedules::Workload> dense;
};

std::string joined(const std::vector<std::string>& epilogue) {
  std::string s;
  for (const std::string& e : epilogue) s += (s.empty() ? "" : "+") + e;
  return s;
}

Extraction extract(const std::string& name) {
  const std::string onnx =
      (std::filesystem::path(KILN_MODELS_CACHE) / name / "model.onnx").string();
  // A fixed preset, so the test reads the same on every host (nothing is run).
  Extraction e;
  for (const ExtractedTask& t :
       extract_tasks(onnx, target_from_name("x86-avx2"), {{"batch", {1}}})) {
    const schedules::Workload& w = t.workload;
    std::cout << t.occurrences << "x " << w.str() << "\n";
    if (w.op != "conv2d") {
      e.others[w.op] += t.occurrences;
      if (w.op == "dense") e.dense.push_back(w);
      continue;
    }
    EXPECT_EQ(w.param("H"), w.param("W")) << w.str();
    EXPECT_EQ(w.param("SH"), w.param("SW")) << w.str();
    EXPECT_EQ(w.param("KH"), w.param("KW")) << w.str();
    const ConvKey key{w.param("C"),  w.param("O"),      w.param("H"),      w.param("KH"),
                      w.param("SH"), w.param("groups"), joined(w.epilogue)};
    EXPECT_EQ(e.convs.count(key), 0u) << "two tasks for one conv workload: " << w.str();
    e.convs[key] += t.occurrences;
  }
  return e;
}

int total(const ConvCounts& c) {
  int n = 0;
  for (const auto& [key, count] : c) n += count;
  return n;
}

// torchvision's resnet18: a 7x7 stem, then four stages of two BasicBlocks.
ConvCounts resnet18_convs() {
  ConvCounts want;
  want[{3, 64, 224, 7, 2, 1, "bias+relu"}] += 1;
  int64_t in = 64, h = 56;
  for (const auto& [out, stride] :
       std::vector<std::pair<int64_t, int64_t>>{{64, 1}, {128, 2}, {256, 2}, {512, 2}}) {
    const int64_t h_out = h / stride;
    for (int block = 0; block < 2; ++block) {
      const int64_t c = block == 0 ? in : out, s = block == 0 ? stride : 1,
                    hi = block == 0 ? h : h_out;
      want[{c, out, hi, 3, s, 1, "bias+relu"}] += 1;
      want[{out, out, h_out, 3, 1, 1, "bias+residual+relu"}] += 1;
      if (block == 0 && (stride != 1 || in != out)) want[{in, out, h, 1, stride, 1, "bias"}] += 1;
    }
    in = out;
    h = h_out;
  }
  return want;
}

// torchvision's mobilenet_v2: its inverted-residual table (expansion t, channels c, repeats n,
// stride s), a 3x3 stem and a 1x1 head to 1280 channels.
ConvCounts mobilenet_v2_convs() {
  ConvCounts want;
  want[{3, 32, 224, 3, 2, 1, "bias+relu6"}] += 1;
  int64_t in = 32, h = 112;
  const std::vector<std::tuple<int64_t, int64_t, int, int64_t>> settings = {
      {1, 16, 1, 1}, {6, 24, 2, 2},  {6, 32, 3, 2}, {6, 64, 4, 2},
      {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1}};
  for (const auto& [t, c, n, s] : settings) {
    for (int i = 0; i < n; ++i) {
      const int64_t stride = i == 0 ? s : 1, hidden = in * t, h_out = h / stride;
      if (t != 1) want[{in, hidden, h, 1, 1, 1, "bias+relu6"}] += 1;
      want[{hidden, hidden, h, 3, stride, hidden, "bias+relu6"}] += 1;
      const bool residual = stride == 1 && in == c;
      want[{hidden, c, h_out, 1, 1, 1, residual ? "bias+residual" : "bias"}] += 1;
      in = c;
      h = h_out;
    }
  }
  want[{320, 1280, 7, 1, 1, 1, "bias+relu6"}] += 1;
  return want;
}

// One dense task, called once: the 1000-class classifier on `features` inputs.
void expect_classifier(const Extraction& got, int64_t features) {
  EXPECT_EQ(got.others.at("dense"), 1);
  ASSERT_EQ(got.dense.size(), 1u);
  EXPECT_EQ(got.dense[0].param("M"), 1);
  EXPECT_EQ(got.dense[0].param("N"), 1000);
  EXPECT_EQ(got.dense[0].param("K"), features);
}

TEST(RealModelTasks, ResNet18IsFifteenConvWorkloadsForTwentyConvs) {
  const Extraction got = extract("resnet18");
  const ConvCounts want = resnet18_convs();
  EXPECT_EQ(want.size(), 15u);
  EXPECT_EQ(total(want), 20);
  EXPECT_EQ(got.convs, want);
  expect_classifier(got, 512);
  EXPECT_EQ(got.others.at("max_pool2d"), 1);         // the stem's
  EXPECT_EQ(got.others.at("global_avg_pool2d"), 1);  // the head's
}

TEST(RealModelTasks, MobileNetV2IsThirtyConvWorkloadsForFiftyTwoConvs) {
  const Extraction got = extract("mobilenet_v2");
  const ConvCounts want = mobilenet_v2_convs();
  EXPECT_EQ(want.size(), 30u);  // later stages repeat earlier blocks' workloads
  EXPECT_EQ(total(want), 52);
  EXPECT_EQ(got.convs, want);
  expect_classifier(got, 1280);
  EXPECT_EQ(got.others.count("max_pool2d"), 0u);
  EXPECT_EQ(got.others.at("global_avg_pool2d"), 1);
}

}  // namespace
}  // namespace kiln::network::test
