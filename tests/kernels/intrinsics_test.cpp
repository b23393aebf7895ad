// schedules/intrinsics.h: the kiln tensor intrinsic calls check their types, and the tile
// bodies have the shape their parameters say (reduction steps, unrolled blocks, remainder,
// odd tail) whatever operator binds their operands. The operators' kernels themselves are
// checked against references in dense_lowp_test and conv2d_lowp_test, and their
// instructions in lowp_asm_test.
#include "schedules/intrinsics.h"

#include <gtest/gtest.h>

#include "compiler/base/error.h"
#include "compiler/ir/op.h"
#include "compiler/ir/printer.h"

namespace kiln::testing {
namespace {

using ir::Buffer;
using ir::DataType;
using ir::Expr;
using schedules::PairDotTile;
using schedules::RemainderKind;

size_t count(const std::string& s, const std::string& part) {
  size_t n = 0;
  for (size_t at = s.find(part); at != std::string::npos; at = s.find(part, at + 1)) ++n;
  return n;
}

Expr vec(const std::string& name, DataType t) {
  return ir::make_load(ir::make_buffer(name, t.element(), {64}), {ir::make_ramp(0, 1, t.lanes)});
}

TEST(TensorIntrinsicCalls, CarryTheKilnNameAndCheckTypes) {
  Expr dot = schedules::pair_dot_bf16(vec("C", DataType::f32(16)), vec("A", DataType::bf16(32)),
                                      vec("B", DataType::bf16(32)));
  const auto* call = dot.as<ir::CallNode>();
  ASSERT_NE(call, nullptr);
  EXPECT_EQ(call->name, schedules::kPairDotBf16);
  EXPECT_EQ(call->call_kind, ir::CallKind::TensorIntrinsic);
  EXPECT_EQ(dot.type(), DataType::f32(16));
  EXPECT_NO_THROW(schedules::pair_dot_bf16(vec("C", DataType::f32(4)), vec("A", DataType::bf16(8)),
                                           vec("B", DataType::bf16(8))));
  EXPECT_THROW(schedules::pair_dot_bf16(vec("C", DataType::f32(16)), vec("A", DataType::bf16(16)),
                                        vec("B", DataType::bf16(16))),
               UserError);
  EXPECT_THROW(schedules::pair_dot_bf16(vec("C", DataType::f32(4)), vec("A", DataType::f16(8)),
                                        vec("B", DataType::f16(8))),
               UserError);
  Expr mm = schedules::mmla_bf16(vec("C", DataType::f32(4)), vec("A", DataType::bf16(8)),
                                 vec("B", DataType::bf16(8)));
  EXPECT_EQ(mm.as<ir::CallNode>()->name, schedules::kMmlaBf16);
  EXPECT_THROW(schedules::mmla_bf16(vec("C", DataType::f32(8)), vec("A", DataType::bf16(16)),
                                    vec("B", DataType::bf16(16))),
               UserError);
}

// A pair-dot tile over plain buffers: A pairs from "A", the odd tail from "ALAST".
std::string pair_dot_body(const PairDotTile& tile) {
  te::TensorIntrin in = schedules::pair_dot_bf16_tile(tile, [tile](const te::TensorizeRegion& r) {
    Buffer a = ir::make_buffer("A", DataType::bf16(), {1024});
    Buffer last = ir::make_buffer("ALAST", DataType::u16(), {16});
    Buffer b = ir::make_buffer("B", DataType::bf16(), {4096});
    const int lanes = static_cast<int>(tile.lanes);
    schedules::PairDotOperands ops;
    ops.out = r.output;
    ops.a_pair = [a](const Expr& k2, int64_t row) {
      return schedules::reinterpret(
          DataType::i32(), ir::make_load(a, {ir::make_ramp(Expr(row * 64) + k2 * 2, 1, 2)}));
    };
    ops.a_last = [last](int64_t row) {
      return ir::make_cast(DataType::i32(), ir::make_load(last, {Expr(row)}));
    };
    ops.b_vector = [b, lanes](const Expr& k2, int64_t v) {
      return ir::make_load(b, {ir::make_ramp(k2 * 256 + Expr(v * 2 * lanes), 1, 2 * lanes)});
    };
    ops.out_index = [lanes](int64_t row, int64_t v) {
      return std::vector<Expr>{ir::make_ramp(Expr((row * 4 + v) * lanes), 1, lanes)};
    };
    return ops;
  });
  EXPECT_EQ(in.extents, (std::vector<int64_t>{tile.pairs, 2, tile.rows, tile.vecs, tile.lanes}));
  te::TensorizeRegion r;
  r.output = ir::make_buffer("C", DataType::f32(), {1024});
  return ir::to_string(in.emit(r));
}

TEST(PairDotTile, UnrolledBlocksThenALoopOverTheRestThenTheOddTail) {
  // 7 pairs, the last a single value: 6 whole pairs = 1 block of 4 + a remainder of 2.
  std::string s = pair_dot_body({2, 3, 16, 7, 4, true, "k2", RemainderKind::Loop});
  EXPECT_NE(s.find("(k2.outer, 0, 1)"), std::string::npos) << s;
  EXPECT_NE(s.find("(k2.rest, 0, 2)"), std::string::npos) << s;
  // rows x vecs dots per step: 4 unrolled steps, one step in the rest loop, the tail.
  EXPECT_EQ(count(s, "pair_dot_bf16("), 6u * (4 + 1 + 1)) << s;
  // The tail's zero-partnered value of each row, broadcast into its 3 vectors' dots.
  EXPECT_EQ(count(s, "ALAST["), 2u * 3) << s;
}

TEST(PairDotTile, UnrolledRemainderAndNoTail) {
  std::string s = pair_dot_body({3, 1, 4, 6, 4, false, "rp", RemainderKind::Unrolled});
  EXPECT_NE(s.find("(rp.outer, 0, 1)"), std::string::npos) << s;
  EXPECT_EQ(s.find("rp.rest"), std::string::npos) << s;
  EXPECT_EQ(count(s, "pair_dot_bf16("), 3u * (4 + 2)) << s;
  EXPECT_EQ(count(s, "ALAST["), 0u) << s;
}

TEST(MmlaTile, ZeroedTilesStepsAndTheFinalAccumulation) {
  const int64_t row_pairs = 2, col_pairs = 3, blocks = 5, unroll = 2;
  te::TensorIntrin in = schedules::mmla_bf16_tile(
      {row_pairs, col_pairs, blocks, unroll, "kq"}, [](const te::TensorizeRegion& r) {
        Buffer a = ir::make_buffer("A", DataType::bf16(), {1024});
        Buffer b = ir::make_buffer("B", DataType::bf16(), {1024});
        schedules::MmlaOperands ops;
        ops.out = r.output;
        ops.a_block = [a](const Expr& kq, int64_t p) {
          return ir::make_load(a, {ir::make_ramp(kq * 16 + Expr(p * 8), 1, 8)});
        };
        ops.b_block = [b](const Expr& kq, int64_t q) {
          return ir::make_load(b, {ir::make_ramp(kq * 32 + Expr(q * 8), 1, 8)});
        };
        ops.out_index = [](int64_t row, int64_t q) {
          return std::vector<Expr>{ir::make_ramp(Expr(row * 6 + 2 * q), 1, 2)};
        };
        return ops;
      });
  EXPECT_EQ(in.extents, (std::vector<int64_t>{blocks, 4, 2 * row_pairs, col_pairs, 2}));
  te::TensorizeRegion r;
  r.output = ir::make_buffer("C", DataType::f32(), {64});
  std::string s = ir::to_string(in.emit(r));
  EXPECT_NE(s.find("bfmmla.tile"), std::string::npos) << s;
  EXPECT_NE(s.find("(kq.outer, 0, 2)"), std::string::npos) << s;
  // 2 unrolled steps in the loop and 1 remaining step, 6 tiles each.
  EXPECT_EQ(count(s, "mmla_bf16("), 6u * (2 + 1)) << s;
  // Each 2x2 tile: two rows of two columns added into C.
  EXPECT_EQ(count(s, "C[ramp("), 2u * 6 * 2) << s;  // load and store per half
}

}  // namespace
}  // namespace kiln::testing
