// Pooling after a blocked conv runs in the conv's NCHW[x]c layout (pooling/blocked.h,
// choose_template.h): a ResNet-like stem (conv, relu, max pool) and head (average pools,
// global pool, gemm) compile with no feature-map conversion around the pools and match the
// reference; a pool reading a model input directly keeps the NCHW template.
#include <gtest/gtest.h>

#include "tests/network/network_check.h"
#include "tests/network/test_models.h"

namespace kiln::network::test {
namespace {

using graph::DataType;
using graph::test::attr_int;
using graph::test::attr_ints;
using graph::test::ModelBuilder;
using graph::test::random_tensor;

// conv 3x3 s2 (3 -> 20 channels: no whole number of blocks) + relu, MaxPool 3x3 s2 p1,
// conv 3x3, AveragePool 3x3 s2 p1 ceil_mode count_include_pad, AveragePool 2x2 s1,
// GlobalAveragePool, Flatten, Gemm.
std::string stem_and_head() {
  ModelBuilder b(13);
  b.input("x", DataType::f32(), {1, 3, 31, 29});
  b.initializer("w0", random_tensor({20, 3, 3, 3}, 1, 0.4f));
  onnx::NodeProto& c0 = b.node("Conv", {"x", "w0"}, {"c0"});
  attr_ints(c0, "pads", {1, 1, 1, 1});
  attr_ints(c0, "strides", {2, 2});
  b.node("Relu", {"c0"}, {"r0"});
  onnx::NodeProto& mp = b.node("MaxPool", {"r0"}, {"p0"});
  attr_ints(mp, "kernel_shape", {3, 3});
  attr_ints(mp, "strides", {2, 2});
  attr_ints(mp, "pads", {1, 1, 1, 1});
  b.initializer("w1", random_tensor({24, 20, 3, 3}, 2, 0.3f));
  attr_ints(b.node("Conv", {"p0", "w1"}, {"c1"}), "pads", {1, 1, 1, 1});
  onnx::NodeProto& ap = b.node("AveragePool", {"c1"}, {"p1"});
  attr_ints(ap, "kernel_shape", {3, 3});
  attr_ints(ap, "strides", {2, 2});
  attr_ints(ap, "pads", {1, 1, 1, 1});
  attr_int(ap, "ceil_mode", 1);
  attr_int(ap, "count_include_pad", 1);
  attr_ints(b.node("AveragePool", {"p1"}, {"p2"}), "kernel_shape", {2, 2});
  b.node("GlobalAveragePool", {"p2"}, {"g"});
  b.node("Flatten", {"g"}, {"f"});
  b.initializer("wf", random_tensor({10, 24}, 3, 0.3f));
  onnx::NodeProto& fc = b.node("Gemm", {"f", "wf"}, {"y"});
  attr_int(fc, "transB", 1);
  b.output("y");
  return b.bytes();
}

TEST(BlockedPoolingNetwork, PoolsAfterBlockedConvsStayBlocked) {
  CompileReport r = expect_host_matches_reference(stem_and_head());
  std::vector<std::string> pools;
  for (const LayerRow& l : r.layers)
    if (l.op_type.find("Pool") != std::string::npos) pools.push_back(l.tpl);
  EXPECT_EQ(pools, (std::vector<std::string>{"max_pool2d.nchwc", "avg_pool2d.nchwc",
                                             "avg_pool2d.nchwc", "global_avg_pool2d.nchwc"}));
  // None: the first conv reads the 3-channel image in NCHW (blocks of one channel).
  EXPECT_EQ(map_conversions(r), 0);
}

TEST(BlockedPoolingNetwork, PoolOfAModelInputStaysNchw) {
  ModelBuilder b(13);
  b.input("x", DataType::f32(), {1, 5, 9, 9});
  onnx::NodeProto& mp = b.node("MaxPool", {"x"}, {"y"});
  attr_ints(mp, "kernel_shape", {2, 2});
  attr_ints(mp, "strides", {2, 2});
  b.output("y");
  CompileReport r = expect_host_matches_reference(b.bytes());
  ASSERT_EQ(r.layers.size(), 1u);
  EXPECT_EQ(r.layers[0].tpl, "max_pool2d.nchw");
}

}  // namespace
}  // namespace kiln::network::test
