// A conv whose taps mostly read padding is split into regions that read none
// (split_padded_conv.h): DeepLabV3's ASPP conv of dilation 12 on a 14x14 map becomes nine convs
// of its live taps, matching the reference with its bias and ReLU; a conv whose taps mostly
// read pixels stays whole, and so does one bound by its weights on a tiny map.
#include <gtest/gtest.h>

#include "tests/network/network_check.h"
#include "tests/network/test_models.h"

namespace kiln::network::test {
namespace {

using graph::DataType;
using graph::test::attr_ints;
using graph::test::ModelBuilder;
using graph::test::random_tensor;

// x [1, 16, 14, 14] -> 3x3 conv (dilation d, padding d) + bias -> ReLU -> y.
std::string dilated_conv(int64_t dilation) {
  ModelBuilder b(13);
  b.input("x", DataType::f32(), {1, 16, 14, 14});
  b.initializer("w", random_tensor({24, 16, 3, 3}, 3, 0.3f));
  b.initializer("bias", random_tensor({24}, 4, 0.2f));
  auto& conv = b.node("Conv", {"x", "w", "bias"}, {"c"});
  attr_ints(conv, "dilations", {dilation, dilation});
  attr_ints(conv, "pads", {dilation, dilation, dilation, dilation});
  b.node("Relu", {"c"}, {"y"});
  b.output("y");
  return b.bytes();
}

int convs(const CompileReport& r) {
  int n = 0;
  for (const LayerRow& l : r.layers) n += l.op_type == "Conv";
  return n;
}

TEST(SplitPaddedConv, AsppConvRunsItsLiveTapsOnly) {
  const CompileReport r = expect_host_matches_reference(dilated_conv(12));
  EXPECT_EQ(convs(r), 9);
  for (const LayerRow& l : r.layers)
    if (l.op_type == "Conv") {
      EXPECT_NE(l.workload.find("PH=0 PW=0"), std::string::npos) << "reads padding: " << l.workload;
      EXPECT_NE(l.workload.find("+relu"), std::string::npos) << "no ReLU: " << l.workload;
    }
}

TEST(SplitPaddedConv, AsppConvOnArmNeon) {
  const std::string skip = expect_arm_neon_matches_reference(dilated_conv(12));
  if (!skip.empty()) GTEST_SKIP() << skip;
}

// Dilation 2 on 14x14: 6 of 14 rows see padding with one tap; most taps read pixels.
TEST(SplitPaddedConv, MostlyLiveConvStaysWhole) {
  EXPECT_EQ(convs(expect_host_matches_reference(dilated_conv(2))), 1);
}

// A 3x3 conv (padding 1) of 256 channels on a 2x2 map: 4 of its 9 taps read a pixel for each
// output, but as 4 regions of one pixel it would read its weights 16/9 as often, and its
// weights are what it waits for.
TEST(SplitPaddedConv, WeightBoundConvOnATinyMapStaysWhole) {
  ModelBuilder b(13);
  b.input("x", DataType::f32(), {1, 256, 2, 2});
  b.initializer("w", random_tensor({256, 256, 3, 3}, 5, 0.05f));
  attr_ints(b.node("Conv", {"x", "w"}, {"y"}), "pads", {1, 1, 1, 1});
  b.output("y");
  EXPECT_EQ(convs(expect_host_matches_reference(b.bytes())), 1);
}

}  // namespace
}  // namespace kiln::network::test
