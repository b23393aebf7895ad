// ShuffleNet's units compile to one channel shuffle each, on the convs' blocks
// (fuse_channel_shuffle.h, blocked_channels.h): a stride-2 unit (both branches convs, their
// Concat folded into the shuffle) and two basic units (the input split into channel halves
// by Slices, one half through convs, concatenated with the other and shuffled), each
// matching the reference; nothing converts out of the blocks between the stem and the head.
// A ShuffleNet-V1 shuffle of 3 groups, which no block splits into runs, runs on NCHW.
#include <gtest/gtest.h>

#include <fstream>

#include "network/layout_plan.h"
#include "network/prepare_graph.h"
#include "tests/network/network_check.h"
#include "tests/network/test_models.h"

namespace kiln::network::test {
namespace {

using graph::DataType;
using graph::HostTensor;
using graph::test::attr_int;
using graph::test::attr_ints;
using graph::test::ModelBuilder;
using graph::test::random_tensor;

class Builder {
 public:
  explicit Builder(ModelBuilder& b) : b_(b) {}

  // Conv (1x1, or 3x3 depthwise with `stride`) + bias, then Relu when `relu`.
  std::string conv(const std::string& x, int64_t in, int64_t out, bool depthwise, int64_t stride,
                   bool relu) {
    const std::string id = std::to_string(next_++), w = "w" + id, bias = "bias" + id;
    const int64_t k = depthwise ? 3 : 1;
    b_.initializer(w, random_tensor({out, depthwise ? 1 : in, k, k}, next_, 0.4f));
    b_.initializer(bias, random_tensor({out}, next_ + 100, 0.1f));
    auto& node = b_.node("Conv", {x, w, bias}, {"c" + id});
    if (depthwise) {
      attr_int(node, "group", in);
      attr_ints(node, "pads", {1, 1, 1, 1});
      attr_ints(node, "strides", {stride, stride});
    }
    if (!relu) return "c" + id;
    b_.node("Relu", {"c" + id}, {"r" + id});
    return "r" + id;
  }

  // The branch of a unit: 1x1, depthwise 3x3, 1x1.
  std::string branch(const std::string& x, int64_t in, int64_t out, int64_t stride) {
    std::string y = conv(x, in, out, false, 1, true);
    y = conv(y, out, out, true, stride, false);
    return conv(y, out, out, false, 1, true);
  }

  // Reshape [1, g, c/g, h, w] -> Transpose -> Reshape [1, c, h, w].
  std::string shuffle(const std::string& x, int64_t c, int64_t g, int64_t h, int64_t w) {
    const std::string id = std::to_string(next_++);
    b_.initializer("split" + id, HostTensor::from_i64(DataType::i64(), {5}, {1, g, c / g, h, w}));
    b_.initializer("back" + id, HostTensor::from_i64(DataType::i64(), {4}, {1, c, h, w}));
    b_.node("Reshape", {x, "split" + id}, {"s" + id});
    attr_ints(b_.node("Transpose", {"s" + id}, {"t" + id}), "perm", {0, 2, 1, 3, 4});
    b_.node("Reshape", {"t" + id, "back" + id}, {"y" + id});
    return "y" + id;
  }

  // Channels [from, to) of x.
  std::string slice(const std::string& x, int64_t from, int64_t to) {
    const std::string id = std::to_string(next_++);
    b_.initializer("from" + id, HostTensor::from_i64(DataType::i64(), {1}, {from}));
    b_.initializer("to" + id, HostTensor::from_i64(DataType::i64(), {1}, {to}));
    b_.initializer("axis" + id, HostTensor::from_i64(DataType::i64(), {1}, {1}));
    b_.node("Slice", {x, "from" + id, "to" + id, "axis" + id}, {"half" + id});
    return "half" + id;
  }

  std::string concat(const std::string& a, const std::string& b) {
    const std::string y = "cat" + std::to_string(next_++);
    attr_int(b_.node("Concat", {a, b}, {y}), "axis", 1);
    return y;
  }

 private:
  ModelBuilder& b_;
  int next_ = 1;
};

// x [1, 24, 12, 12] -> stem conv (48) -> stride-2 unit (96 channels at 6x6) -> two basic
// units -> a 1x1 head conv -> y.
std::string shufflenet_v2_units() {
  ModelBuilder mb(13);
  Builder b(mb);
  mb.input("x", DataType::f32(), {1, 24, 12, 12});
  std::string x = b.conv("x", 24, 48, false, 1, true);
  // Stride 2: both branches read the unit's input.
  std::string left = b.conv(b.conv(x, 48, 48, true, 2, false), 48, 48, false, 1, true);
  std::string right = b.branch(x, 48, 48, 2);
  x = b.shuffle(b.concat(left, right), 96, 2, 6, 6);
  for (int unit = 0; unit < 2; ++unit) {
    const std::string kept = b.slice(x, 0, 48), through = b.slice(x, 48, 96);
    x = b.shuffle(b.concat(kept, b.branch(through, 48, 48, 1)), 96, 2, 6, 6);
  }
  std::string y = b.conv(x, 96, 32, false, 1, false);
  mb.node("Identity", {y}, {"y"});
  mb.output("y");
  return mb.bytes();
}

int count(const CompileReport& r, const std::string& op_type, const std::string& in_workload = "") {
  int n = 0;
  for (const LayerRow& l : r.layers)
    n += l.op_type == op_type && l.workload.find(in_workload) != std::string::npos;
  return n;
}

TEST(ChannelShuffle, ShuffleNetUnitsShuffleOnBlocks) {
  const CompileReport r = expect_host_matches_reference(shufflenet_v2_units());
  EXPECT_EQ(count(r, "ChannelShuffle"), 3);
  EXPECT_EQ(count(r, "ChannelShuffle", "block=1 "), 0) << "a shuffle ran on NCHW";
  EXPECT_EQ(count(r, "Transpose"), 0);
  EXPECT_EQ(count(r, "Concat"), 0);
  EXPECT_EQ(count(r, "Slice", "block="), 4) << "a half was sliced on NCHW";
  // Into blocks once (the image), out once (the head's output).
  EXPECT_EQ(count(r, "LayoutTransform", "direction=1"), 1);
  EXPECT_LE(count(r, "LayoutTransform", "direction=0"), 1);
}

// The layout plan of `kiln compile --records` costs the blocked shuffles and slices with the
// blocks they read and write: its conversions are the ones the compile builds.
TEST(ChannelShuffle, LayoutPlanCountsTheCompiledConversions) {
  const std::string bytes = shufflenet_v2_units();
  const CompileReport r = expect_host_matches_reference(bytes);
  TempDir dir("kiln-channel-shuffle-test");
  const std::string path = dir.file("units.onnx");
  std::ofstream(path, std::ios::binary) << bytes;
  const LayoutPlan plan = plan_layouts(prepare_graph(path, {}).graph, target_from_name("host"), {});
  EXPECT_EQ(plan.history_best.conversions, count(r, "LayoutTransform"));
}

TEST(ChannelShuffle, ShuffleNetUnitsOnArmNeon) {
  const std::string skip = expect_arm_neon_matches_reference(shufflenet_v2_units());
  if (!skip.empty()) GTEST_SKIP() << skip;
}

// ShuffleNet-V1: a grouped 1x1 conv, a shuffle of 3 groups, a depthwise conv. No block
// splits into 3 runs, so the shuffle copies NCHW planes.
TEST(ChannelShuffle, ThreeGroupsRunOnNchw) {
  ModelBuilder mb(13);
  Builder b(mb);
  mb.input("x", DataType::f32(), {1, 24, 8, 8});
  std::string x = b.conv("x", 24, 24, false, 1, true);
  x = b.shuffle(x, 24, 3, 8, 8);
  x = b.conv(x, 24, 24, true, 1, false);
  mb.node("Identity", {x}, {"y"});
  mb.output("y");
  const CompileReport r = expect_host_matches_reference(mb.bytes());
  EXPECT_EQ(count(r, "ChannelShuffle", "block=1 "), 1);
}

}  // namespace
}  // namespace kiln::network::test
