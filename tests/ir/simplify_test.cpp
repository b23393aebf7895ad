// The simplifier on printed IR: folding, canonical linear forms, bound-driven rewrites.
#include <gtest/gtest.h>

#include "compiler/ir/op.h"
#include "compiler/ir/printer.h"
#include "compiler/ir/simplify.h"

namespace kiln::ir {
namespace {

std::string s(const Expr& e, const BoundMap& b = {}) { return to_string(simplify(e, b)); }

TEST(SimplifyTest, ConstantFolding) {
  EXPECT_EQ(s(Expr(3) * 4 + 2), "14");
  EXPECT_EQ(s(make_float(DataType::f32(), 1.5) * make_float(DataType::f32(), 2)), "3f");
  EXPECT_EQ(s(floordiv(Expr(-7), 2)), "-4");
  EXPECT_EQ(s(floormod(Expr(-7), 2)), "1");
  EXPECT_EQ(s(truncdiv(Expr(-7), 2)), "-3");
  EXPECT_EQ(s(min(Expr(3), 5) + max(Expr(3), 5)), "8");
  EXPECT_EQ(s(Expr(3) < 4 && Expr(2) == 2), "true");
}

TEST(SimplifyTest, LinearFormsCombineLikeTerms) {
  Var i("i"), j("j");
  EXPECT_EQ(s(i * 4 + j + i * 2 - 3 + 1), "(((i*6) + j) - 2)");
  EXPECT_EQ(s((i + 1) * 8 - i * 8), "8");
  EXPECT_EQ(s(i - i), "0");
  EXPECT_EQ(s(j + i * 0), "j");
}

TEST(SimplifyTest, DivModUnderBounds) {
  Var i("i"), j("j");
  BoundMap b{{i.node(), {0, 15}}, {j.node(), {0, 3}}};
  EXPECT_EQ(s(floordiv(i * 4 + j, 4), b), "i");
  EXPECT_EQ(s(floormod(i * 4 + j, 4), b), "j");
  EXPECT_EQ(s(floordiv(i, 16), b), "0");
  EXPECT_EQ(s(floormod(i, 16), b), "i");
  EXPECT_EQ(s(floordiv(i * 8 + 5, 4), b), "((i*2) + 1)");
  EXPECT_EQ(s(floordiv(floordiv(i, 2), 4)), "(i / 8)");
  // fuse then split: x/c*c + x%c == x
  EXPECT_EQ(s(floordiv(i, 4) * 4 + floormod(i, 4)), "i");
}

TEST(SimplifyTest, MinMaxAndComparisonsUnderBounds) {
  Var i("i"), j("j");
  BoundMap b{{i.node(), {0, 7}}};
  EXPECT_EQ(s(min(i, 8), b), "i");
  EXPECT_EQ(s(max(i, 8), b), "8");
  EXPECT_EQ(s(i < 8, b), "true");
  EXPECT_EQ(s(i * 4 + 3 < 32, b), "true");
  EXPECT_EQ(s(i >= 8, b), "false");
  EXPECT_EQ(s(i < j, b), "(i < j)");
  EXPECT_TRUE(can_prove(i + 1 <= 8, b));
  EXPECT_FALSE(can_prove(i + 2 <= 8, b));
}

TEST(SimplifyTest, VectorIndexArithmetic) {
  Var i("i");
  Expr r = make_ramp(i * 16, 1, 16);
  EXPECT_EQ(s(r + make_broadcast(Expr(4), 16)), "ramp(((i*16) + 4), 1, 16)");
  EXPECT_EQ(s(make_ramp(i, 1, 4) * make_broadcast(Expr(3), 4)), "ramp((i*3), 3, 4)");
  EXPECT_EQ(s(floordiv(r, make_broadcast(Expr(16), 16))), "x16(i)");
}

TEST(SimplifyTest, Statements) {
  Var i("i"), j("j");
  Buffer c = make_buffer("C", DataType::f32(), {8});
  Stmt body = make_if(i < 8, make_store(c, make_float(DataType::f32(), 0), {i}));
  Stmt loop = make_for(i, 0, 8, ForKind::Serial, body);
  EXPECT_EQ(to_string(simplify(loop)), "for (i, 0, 8) {\n  C[i] = 0f\n}\n");
  Stmt one = make_for(j, 3, 1, ForKind::Serial, make_store(c, make_float(DataType::f32(), 1), {j}));
  EXPECT_EQ(to_string(simplify(one)), "C[3] = 1f\n");
  EXPECT_FALSE(simplify(make_for(j, 0, 0, ForKind::Serial, one)).defined());
}

}  // namespace
}  // namespace kiln::ir
