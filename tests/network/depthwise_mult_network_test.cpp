// A depthwise convolution with a channel multiplier inside a network: a 1x1 conv, a
// depthwise conv with multiplier 2 (group = C, O = 2C) and ReLU, then a plain depthwise one,
// compiled for the host and for arm-neon (qemu) and compared with the reference evaluator;
// the multiplier layer runs conv2d.depthwise_mult, sharing its neighbours' channel blocks.
#include <gtest/gtest.h>

#include "tests/network/network_check.h"
#include "tests/network/test_models.h"

namespace kiln::network::test {
namespace {

using graph::test::attr_int;
using graph::test::attr_ints;
using graph::test::ModelBuilder;
using graph::test::random_tensor;

std::string model() {
  ModelBuilder b(13);
  b.input("x", graph::DataType::f32(), {1, 8, 12, 12});
  b.initializer("w1", random_tensor({16, 8, 1, 1}, 41, 0.5f));
  b.node("Conv", {"x", "w1"}, {"a"});
  b.initializer("wm", random_tensor({32, 1, 3, 3}, 42, 0.5f));
  b.initializer("bm", random_tensor({32}, 43, 0.5f));
  auto& mult = b.node("Conv", {"a", "wm", "bm"}, {"m"});
  attr_int(mult, "group", 16);
  attr_ints(mult, "pads", {1, 1, 1, 1});
  b.node("Relu", {"m"}, {"r"});
  b.initializer("wd", random_tensor({32, 1, 3, 3}, 44, 0.5f));
  auto& dw = b.node("Conv", {"r", "wd"}, {"y"});
  attr_int(dw, "group", 32);
  attr_ints(dw, "strides", {2, 2});
  b.output("y");
  return b.bytes();
}

TEST(DepthwiseMultNetwork, HostAndArmMatchTheReference) {
  CompileReport r = expect_host_matches_reference(model());
  std::vector<std::string> templates;
  for (const LayerRow& l : r.layers) templates.push_back(l.tpl);
  EXPECT_NE(std::find(templates.begin(), templates.end(), "conv2d.depthwise_mult"),
            templates.end());
  EXPECT_NE(std::find(templates.begin(), templates.end(), "conv2d.depthwise"), templates.end());
  std::string skip = expect_arm_neon_matches_reference(model());
  if (!skip.empty()) GTEST_SKIP() << skip;
}

}  // namespace
}  // namespace kiln::network::test
