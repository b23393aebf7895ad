// Host tensors: element conversions (f16 and bf16 rounding, float to integer, bool), the size
// limit, and the evaluator's checks on the values it is given.
#include "compiler/graph/tensor.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>

#include "compiler/graph/evaluate.h"

namespace kiln::graph {
namespace {

TEST(HostTensor, HalfRoundsToNearestEven) {
  EXPECT_EQ(f32_to_f16(1.0f), 0x3c00);
  EXPECT_EQ(f32_to_f16(0.1f), 0x2e66);
  EXPECT_EQ(f32_to_f16(-0.0f), 0x8000);
  EXPECT_EQ(f32_to_f16(65504.0f), 0x7bff);                      // the largest half
  EXPECT_EQ(f32_to_f16(65519.0f), 0x7bff);                      // rounds down
  EXPECT_EQ(f32_to_f16(65520.0f), 0x7c00);                      // rounds to infinity
  EXPECT_EQ(f32_to_f16(std::ldexp(1.0f, -24)), 0x0001);         // the smallest subnormal
  EXPECT_EQ(f32_to_f16(std::ldexp(1.0f, -25)), 0x0000);         // a tie: to even (zero)
  EXPECT_EQ(f32_to_f16(std::ldexp(3.0f, -25)), 0x0002);         // 1.5 units: to even (2)
  EXPECT_EQ(f32_to_f16(1.0f + std::ldexp(1.0f, -11)), 0x3c00);  // halfway: to even
  EXPECT_TRUE(std::isnan(f16_to_f32(f32_to_f16(NAN))));
  // Every half survives a round trip through float.
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const float f = f16_to_f32(static_cast<uint16_t>(h));
    if (std::isnan(f)) continue;
    ASSERT_EQ(f32_to_f16(f), h) << std::hex << h;
  }
}

TEST(HostTensor, BFloat16RoundsToNearestEven) {
  EXPECT_EQ(f32_to_bf16(1.0f), 0x3f80);
  EXPECT_EQ(f32_to_bf16(std::bit_cast<float>(0x3f808000u)), 0x3f80);  // tie, even below
  EXPECT_EQ(f32_to_bf16(std::bit_cast<float>(0x3f818000u)), 0x3f82);  // tie, even above
  EXPECT_EQ(f32_to_bf16(std::bit_cast<float>(0x3f808001u)), 0x3f81);
  EXPECT_EQ(bf16_to_f32(0xc000), -2.0f);
  EXPECT_TRUE(std::isnan(bf16_to_f32(f32_to_bf16(NAN))));
}

TEST(HostTensor, ConvertsBetweenComputeTypes) {
  HostTensor t = HostTensor::from_f64(DataType::i32(), {4}, {-2.9, 2.9, NAN, 1e30});
  EXPECT_EQ(t.to_i64(), (std::vector<int64_t>{-2, 2, 0, INT32_MAX}));  // toward zero, saturated
  EXPECT_EQ(HostTensor::from_f64(DataType::u8(), {2}, {-3, 300}).to_i64(),
            (std::vector<int64_t>{0, 255}));
  EXPECT_EQ(HostTensor::from_i64(DataType::i8(), {1}, {200}).to_i64(), std::vector<int64_t>{-56});
  HostTensor b = HostTensor::from_f64(DataType::boolean(), {3}, {0.0, -0.5, NAN});
  EXPECT_EQ(b.to_i64(), (std::vector<int64_t>{0, 1, 1}));
  HostTensor h = HostTensor::from_i64(DataType::f16(), {2}, {3, -2049});
  EXPECT_EQ(h.to_f64(), (std::vector<double>{3, -2048}));  // 2049 is not a half
  EXPECT_EQ(HostTensor::i64_vector({5, 6}).reshaped({2, 1}).shape(), (std::vector<int64_t>{2, 1}));
}

TEST(HostTensor, RefusesTensorsOverTheLimit) {
  const int64_t old = max_tensor_bytes();
  set_max_tensor_bytes(1 << 20);
  EXPECT_NO_THROW(HostTensor(DataType::f32(), {256, 1024}));
  EXPECT_THROW(HostTensor(DataType::f32(), {257, 1024}), UserError);
  set_max_tensor_bytes(old);
  EXPECT_THROW(HostTensor(DataType::f32(), {int64_t{1} << 40, 1 << 10}), UserError);
  EXPECT_THROW(HostTensor(DataType::f32(), {-1}), UserError);
}

TEST(Evaluator, ChecksTheInputsItIsGiven) {
  Graph g;
  g.source = "m.onnx";
  g.inputs = {"x"};
  g.types["x"] = {DataType::f32(), Shape{Dim::symbolic("n"), Dim::of(2)}};
  Node relu;
  relu.op_type = "Relu";
  relu.inputs = {"x"};
  relu.outputs = {"y"};
  g.nodes = {relu};
  g.outputs = {"y"};
  EXPECT_NO_THROW(evaluate(g, {{"x", HostTensor(DataType::f32(), {5, 2})}}));
  auto message = [&](const std::map<std::string, HostTensor>& inputs) {
    try {
      evaluate(g, inputs);
    } catch (const UserError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message({}), "m.onnx: no value given for graph input 'x'");
  EXPECT_EQ(message({{"x", HostTensor(DataType::f16(), {5, 2})}}),
            "graph input 'x' is f32, but the value given is f16");
  EXPECT_EQ(message({{"x", HostTensor(DataType::f32(), {5, 3})}}),
            "graph input 'x' has shape [n,2], but the value given has shape [5,3]");
  EXPECT_EQ(message({{"x", HostTensor(DataType::f32(), {5, 2})}, {"z", HostTensor()}}),
            "'z' is not an input of the graph");
}

}  // namespace
}  // namespace kiln::graph
