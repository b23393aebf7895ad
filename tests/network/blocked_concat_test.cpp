// Channel concats between convs run on the convs' NCHW[x]c blocks (blocked_concat.h): an
// Inception-style block (two conv branches, Concat, a conv) compiles with a rank-5 concat and
// no conversions around it, and matches the reference; channels that do not divide into the
// block keep the NCHW concat.
#include "network/blocked_concat.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "network/layout_plan.h"
#include "network/prepare_graph.h"
#include "tests/network/network_check.h"
#include "tests/network/test_models.h"

namespace kiln::network::test {
namespace {

using graph::DataType;
using graph::test::attr_int;
using graph::test::attr_ints;
using graph::test::ModelBuilder;
using graph::test::random_tensor;

// Layout conversions, all of them or those of one direction (0: into blocks, 1: to NCHW,
// 2: re-block).
int conversions(const CompileReport& r, int direction = -1) {
  int n = 0;
  for (const LayerRow& l : r.layers)
    n += l.op_type == "LayoutTransform" &&
         (direction < 0 ||
          l.workload.find("direction=" + std::to_string(direction)) != std::string::npos);
  return n;
}

// x -> conv 1x1 (c0 channels) and conv 3x3 (c1 channels) -> Concat -> conv 1x1 -> y.
std::string inception_block(int64_t c0, int64_t c1) {
  ModelBuilder b(17);
  b.input("x", DataType::f32(), {1, 16, 9, 11});
  b.initializer("w0", random_tensor({c0, 16, 1, 1}, 1, 0.3f));
  b.node("Conv", {"x", "w0"}, {"a"});
  b.initializer("w1", random_tensor({c1, 16, 3, 3}, 2, 0.3f));
  attr_ints(b.node("Conv", {"x", "w1"}, {"b"}), "pads", {1, 1, 1, 1});
  attr_int(b.node("Concat", {"a", "b"}, {"cat"}), "axis", 1);
  b.initializer("w2", random_tensor({16, c0 + c1, 1, 1}, 3, 0.3f));
  b.node("Conv", {"cat", "w2"}, {"y"});
  b.output("y");
  return b.bytes();
}

bool has_blocked_concat(const CompileReport& r) {
  for (const LayerRow& l : r.layers)
    if (l.op_type == "Concat" && l.workload.find("ndim=5") != std::string::npos) return true;
  return false;
}

// In NCHW the block costs five conversions: the image in, both branches out, the concat in
// and the result out. On blocks nothing goes out to NCHW but the result; a branch whose conv
// writes a wider block than the other's is re-blocked (the widest block all channel counts
// divide into wins).
TEST(BlockedConcat, InceptionBlockConcatsBlocks) {
  const CompileReport r = expect_host_matches_reference(inception_block(32, 64));
  EXPECT_TRUE(has_blocked_concat(r));
  EXPECT_EQ(conversions(r, 1), 1);
  EXPECT_LE(conversions(r), 3);
}

// 48 channels do not divide into a block of 32: the concat runs on a narrower block.
TEST(BlockedConcat, NarrowerBlockWhereChannelsDoNotDivide) {
  const CompileReport r = expect_host_matches_reference(inception_block(32, 48));
  EXPECT_TRUE(has_blocked_concat(r));
  EXPECT_EQ(conversions(r, 1), 1);
  EXPECT_LE(conversions(r), 4);
}

// The layout plan of `kiln compile --records` costs the blocked concat with the blocks it
// reads and writes: its conversions are the ones the compile builds (none around the concat).
TEST(BlockedConcat, LayoutPlanCountsTheCompiledConversions) {
  const std::string bytes = inception_block(32, 64);
  const CompileReport r = expect_host_matches_reference(bytes);
  TempDir dir("kiln-blocked-concat-test");
  const std::string path = dir.file("block.onnx");
  std::ofstream(path, std::ios::binary) << bytes;
  const LayoutPlan plan = plan_layouts(prepare_graph(path, {}).graph, target_from_name("host"), {});
  EXPECT_EQ(plan.history_best.conversions, conversions(r));
}

TEST(BlockedConcat, InceptionBlockOnArmNeon) {
  const std::string skip = expect_arm_neon_matches_reference(inception_block(32, 48));
  if (!skip.empty()) GTEST_SKIP() << skip;
}

TEST(BlockedConcat, ChannelsOffTheBlockStayNchw) {
  const CompileReport r = expect_host_matches_reference(inception_block(18, 14));
  EXPECT_FALSE(has_blocked_concat(r));
}

// A DenseNet-style block: each layer (a 3x3 conv of 8 channels) reads the concat of all the
// outputs before it, the block's output concatenates them all (layers + 1 inputs in one
// Concat, as torchvision's DenseNet exports it), and a single-input Concat (a copy, what its
// first layer reads) leads in.
std::string dense_block(int layers) {
  ModelBuilder b(13);
  b.input("x", DataType::f32(), {1, 16, 6, 7});
  attr_int(b.node("Concat", {"x"}, {"x0"}), "axis", 1);
  std::vector<std::string> features = {"x0"};
  int64_t channels = 16;
  for (int l = 0; l < layers; ++l) {
    const std::string cat = "cat" + std::to_string(l), out = "f" + std::to_string(l);
    if (features.size() > 1) attr_int(b.node("Concat", features, {cat}), "axis", 1);
    b.initializer("w" + std::to_string(l), random_tensor({8, channels, 3, 3}, 10 + l, 0.2f));
    attr_ints(
        b.node("Conv", {features.size() > 1 ? cat : features[0], "w" + std::to_string(l)}, {out}),
        "pads", {1, 1, 1, 1});
    features.push_back(out);
    channels += 8;
  }
  attr_int(b.node("Concat", features, {"y"}), "axis", 1);
  b.output("y");
  return b.bytes();
}

TEST(BlockedConcat, DenseBlockConcatsManyInputsAndOne) {
  expect_host_matches_reference(dense_block(12));
}

TEST(BlockedConcat, DenseBlockOnArmNeon) {
  const std::string skip = expect_arm_neon_matches_reference(dense_block(6));
  if (!skip.empty()) GTEST_SKIP() << skip;
}

// DenseNet's layers as torchvision writes them (after a stem conv): each reads the Concat of the
// features before it through BatchNormalization -> ReLU (pre-activation, so no conv to fold the BN
// into), then a 1x1 conv, BN -> ReLU (folded into that conv) and a 3x3 conv. The unfolded BN and
// its ReLU are one scale-shift kernel on the concat's blocks (batch_norms_to_scale_shifts): no
// batch_norm kernel, and nothing converts out of the blocks between the image and the output.
std::string preactivation_dense_block(int layers) {
  ModelBuilder b(13);
  b.input("x", DataType::f32(), {1, 3, 6, 7});
  b.initializer("stem", random_tensor({16, 3, 3, 3}, 7, 0.3f));
  attr_ints(b.node("Conv", {"x", "stem"}, {"s"}), "pads", {1, 1, 1, 1});
  std::vector<std::string> features = {"s"};
  int64_t channels = 16;
  auto bn_relu = [&](const std::string& in, int64_t c, const std::string& out, int seed) {
    b.initializer(out + ".g", random_tensor({c}, seed, 0.5f));
    b.initializer(out + ".b", random_tensor({c}, seed + 1, 0.5f));
    b.initializer(out + ".m", random_tensor({c}, seed + 2, 0.5f));
    graph::HostTensor var = random_tensor({c}, seed + 3, 0.5f);
    for (int64_t i = 0; i < c; ++i) var.data<float>()[i] = 0.5f + std::abs(var.data<float>()[i]);
    b.initializer(out + ".v", var);
    b.node("BatchNormalization", {in, out + ".g", out + ".b", out + ".m", out + ".v"},
           {out + ".n"});
    b.node("Relu", {out + ".n"}, {out});
  };
  for (int l = 0; l < layers; ++l) {
    const std::string id = std::to_string(l), cat = "cat" + id;
    attr_int(b.node("Concat", features, {cat}), "axis", 1);
    bn_relu(cat, channels, "a" + id, 100 * l);
    b.initializer("w1_" + id, random_tensor({32, channels, 1, 1}, 100 * l + 10, 0.3f));
    b.node("Conv", {"a" + id, "w1_" + id}, {"h" + id});
    bn_relu("h" + id, 32, "r" + id, 100 * l + 20);
    b.initializer("w3_" + id, random_tensor({8, 32, 3, 3}, 100 * l + 30, 0.2f));
    attr_ints(b.node("Conv", {"r" + id, "w3_" + id}, {"f" + id}), "pads", {1, 1, 1, 1});
    features.push_back("f" + id);
    channels += 8;
  }
  attr_int(b.node("Concat", features, {"y"}), "axis", 1);
  b.output("y");
  return b.bytes();
}

TEST(BlockedConcat, PreactivationBatchNormsScaleAndShiftOnBlocks) {
  const CompileReport r = expect_host_matches_reference(preactivation_dense_block(4));
  int scale_shifts = 0;
  for (const LayerRow& l : r.layers) {
    EXPECT_NE(l.op_type, "BatchNormalization") << l.workload;
    if (l.op_type == "ScaleShift") {
      ++scale_shifts;
      EXPECT_NE(l.workload.find("rank=5"), std::string::npos) << "not on blocks: " << l.workload;
      EXPECT_NE(l.workload.find("relu"), std::string::npos) << "ReLU not fused: " << l.workload;
    }
  }
  EXPECT_EQ(scale_shifts, 4);
  EXPECT_EQ(conversions(r, 1), 1);  // the output
}

TEST(BlockedConcat, PreactivationDenseBlockOnArmNeon) {
  const std::string skip = expect_arm_neon_matches_reference(preactivation_dense_block(3));
  if (!skip.empty()) GTEST_SKIP() << skip;
}

TEST(BlockedConcat, WorkloadOnlyForDividingChannelConcats) {
  schedules::Workload w{"concat",
                        {{"ndim", 4},
                         {"axis", 1},
                         {"inputs", 2},
                         {"D0", 1},
                         {"D1", 1},
                         {"D2", 7},
                         {"D3", 5},
                         {"E0", 32},
                         {"E1", 16}},
                        ir::DataType::f32(),
                        {}};
  std::optional<schedules::Workload> b = blocked_concat(w, 16);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->param("ndim"), 5);
  EXPECT_EQ(b->param("D4"), 16);
  EXPECT_EQ(b->param("E0"), 2);
  EXPECT_EQ(b->param("E1"), 1);
  EXPECT_FALSE(blocked_concat(w, 0));   // not blocked
  EXPECT_FALSE(blocked_concat(w, 32));  // 16 channels are not a block of 32
  w.params["axis"] = 2;
  EXPECT_FALSE(blocked_concat(w, 16));  // not the channel axis
}

}  // namespace
}  // namespace kiln::network::test
