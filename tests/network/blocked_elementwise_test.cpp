// Elementwise ops between convs run in the convs' NCHW[x]c layout (blocked_elementwise.h):
// a MobileNetV3 squeeze-excite block compiles with its Mul on the blocked tensor and the
// blocked [N,C,1,1] scale, without conversions around it, and matches the reference.
#include <gtest/gtest.h>

#include "network/blocked_elementwise.h"
#include "tests/network/network_check.h"
#include "tests/network/test_models.h"

namespace kiln::network::test {
namespace {

using graph::DataType;
using graph::test::attr_ints;
using graph::test::ModelBuilder;
using graph::test::random_tensor;

// map_conversions (network_check.h) counts feature maps only: re-blocking a [N,C,1,1] vector
// costs C copies.

// conv 3x3 -> HardSwish -> SE (GlobalAveragePool, 1x1 convs, HardSigmoid, Mul) -> conv 1x1.
std::string squeeze_excite_block() {
  ModelBuilder b(13);
  b.input("x", DataType::f32(), {1, 16, 10, 10});
  b.initializer("w0", random_tensor({32, 16, 3, 3}, 1, 0.3f));
  attr_ints(b.node("Conv", {"x", "w0"}, {"c0"}), "pads", {1, 1, 1, 1});
  b.node("HardSwish", {"c0"}, {"h"});
  b.node("GlobalAveragePool", {"h"}, {"pooled"});
  b.initializer("w1", random_tensor({8, 32, 1, 1}, 2, 0.5f));
  b.node("Conv", {"pooled", "w1"}, {"c1"});
  b.node("Relu", {"c1"}, {"r1"});
  b.initializer("w2", random_tensor({32, 8, 1, 1}, 3, 0.5f));
  b.node("Conv", {"r1", "w2"}, {"c2"});
  b.node("HardSigmoid", {"c2"}, {"scale"});
  b.node("Mul", {"h", "scale"}, {"excited"});
  b.initializer("w3", random_tensor({16, 32, 1, 1}, 4, 0.3f));
  b.node("Conv", {"excited", "w3"}, {"y"});
  b.output("y");
  return b.bytes();
}

TEST(BlockedElementwise, SqueezeExciteMulRunsBlocked) {
  CompileReport r = expect_host_matches_reference(squeeze_excite_block());
  bool blocked_mul = false;
  for (const LayerRow& l : r.layers)
    blocked_mul |= l.op_type == "Mul" && l.workload.find("rank=5") != std::string::npos;
  EXPECT_TRUE(blocked_mul);
  // The image into blocks and the result out: none around the HardSwish, HardSigmoid or Mul
  // (in NCHW they were two more feature-map conversions), nor the pool (pooling/blocked.h).
  EXPECT_EQ(map_conversions(r), 2);
}

TEST(BlockedElementwise, OperandKindsAndRefusals) {
  schedules::Workload mul{"mul", {{"rank", 4}}, ir::DataType::f32(), {}};
  for (int i = 0; i < 4; ++i) {
    mul.params["a" + std::to_string(i)] = std::vector<int64_t>{1, 32, 5, 5}[i];
    mul.params["b" + std::to_string(i)] = std::vector<int64_t>{1, 32, 1, 1}[i];
  }
  std::optional<BlockedElementwise> bw = blocked_elementwise(mul, 8);
  ASSERT_TRUE(bw.has_value());
  EXPECT_EQ(bw->workload.param("rank"), 5);
  EXPECT_EQ(bw->workload.param("a1"), 4);
  EXPECT_EQ(bw->workload.param("a4"), 8);
  EXPECT_EQ(bw->workload.param("b2"), 1);
  EXPECT_EQ(bw->kinds[1], BlockedOperandKind::PerChannel);
  // 32 channels in blocks of 12 leave padded channels: fine for mul (finite stays finite),
  // not for div (1/0 in a padded lane).
  ASSERT_TRUE(blocked_elementwise(mul, 12).has_value());
  EXPECT_EQ(blocked_elementwise(mul, 12)->workload.param("a1"), 3);
  schedules::Workload div = mul;
  div.op = "div";
  EXPECT_FALSE(blocked_elementwise(div, 12).has_value());
  EXPECT_TRUE(blocked_elementwise(div, 8).has_value());
  // A [1,1,H,W] operand is not a broadcast in NCHW[x]c.
  mul.params["b1"] = 1, mul.params["b2"] = 5, mul.params["b3"] = 5;
  EXPECT_FALSE(blocked_elementwise(mul, 8).has_value());
}

}  // namespace
}  // namespace kiln::network::test
