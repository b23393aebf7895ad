// Unit tests of IR construction, printing, structural equality and substitution.
#include <gtest/gtest.h>

#include "compiler/base/error.h"
#include "compiler/ir/functor.h"
#include "compiler/ir/op.h"
#include "compiler/ir/printer.h"
#include "compiler/ir/structural.h"
#include "compiler/ir/substitute.h"

namespace kiln::ir {
namespace {

TEST(DataTypeTest, NamesAndParsing) {
  EXPECT_EQ(DataType::f32(16).str(), "f32x16");
  EXPECT_EQ(DataType::bf16().str(), "bf16");
  EXPECT_EQ(DataType::boolean().str(), "bool");
  EXPECT_EQ(DataType::u8(4).str(), "u8x4");
  for (const char* n : {"f32", "f16", "bf16", "f64", "i8", "u8", "i16", "i32", "i64", "bool"})
    EXPECT_EQ(parse_data_type(n).str(), n);
  EXPECT_THROW(parse_data_type("float"), UserError);
  EXPECT_TRUE(DataType::bf16().is_float());
  EXPECT_EQ(DataType::f16(8).bytes(), 2);
}

TEST(ExprTest, LiteralsAdoptTheOtherSidesType) {
  Var x("x", DataType::f32());
  Expr e = x * 2;
  EXPECT_EQ(e.type(), DataType::f32());
  EXPECT_EQ(to_string(e), "(x*2f)");
  Var i("i");
  EXPECT_EQ(to_string(i * 64 + 3), "((i*64) + 3)");
  EXPECT_EQ((i < 4).type(), DataType::boolean());
}

TEST(ExprTest, ScalarsBroadcastToVectors) {
  Var i("i");
  Expr r = make_ramp(i, 1, 16);
  Expr e = r + 4;
  EXPECT_EQ(e.type(), DataType::i64(16));
  EXPECT_EQ(to_string(e), "(ramp(i, 1, 16) + x16(4))");
}

TEST(ExprTest, MismatchedTypesAreInternalErrors) {
  Var x("x", DataType::f32()), i("i");
  EXPECT_THROW(x + i, InternalError);
}

TEST(ExprTest, ShuffleTypesAndChecks) {
  Var a("a", DataType::f32(4)), b("b", DataType::f32(4));
  Expr s = make_shuffle(a, b, {0, 4, 2, 6});  // NEON trn1
  EXPECT_EQ(s.type(), DataType::f32(4));
  EXPECT_EQ(s.as<CallNode>()->call_kind, CallKind::Shuffle);
  EXPECT_EQ(make_shuffle(a, b, {7, 0}).type(), DataType::f32(2));  // any count of lanes
  EXPECT_TRUE(structural_equal(s, make_shuffle(a, b, {0, 4, 2, 6})));
  EXPECT_FALSE(structural_equal(s, make_shuffle(a, b, {0, 4, 2, 7})));
  EXPECT_THROW(make_shuffle(a, b, {0, 8}), UserError);                 // past both vectors
  EXPECT_THROW(make_shuffle(a, Var("c", DataType::f32(8)), {0}), UserError);  // two widths
  EXPECT_THROW(make_shuffle(Var("x", DataType::f32()), Var("y", DataType::f32()), {0}), UserError);
}

TEST(PrinterTest, LoopNest) {
  Var i("i"), j("j");
  Buffer a = make_buffer("A", DataType::f32(), {64, 64});
  Buffer c = make_buffer("C", DataType::f32(), {64});
  Stmt s = make_for(i, 0, 64, ForKind::Parallel,
                    make_for(j, 0, 64, ForKind::Serial,
                             make_store(c, make_load(c, {i}) + make_load(a, {i, j}), {i})));
  EXPECT_EQ(to_string(s),
            "parallel (i, 0, 64) {\n"
            "  for (j, 0, 64) {\n"
            "    C[i] = (C[i] + A[i, j])\n"
            "  }\n"
            "}\n");
}

TEST(PrinterTest, AllocateIfAndCalls) {
  Var i("i");
  Buffer l = make_buffer("acc", DataType::f32(), {16}, MemScope::Local);
  Stmt s = make_allocate(
      l, make_if(i < 3, make_store(l, make_call(DataType::f32(), "fma", {make_float(DataType::f32(), 1), make_float(DataType::f32(), 2), make_float(DataType::f32(), 3)}), {i}),
                 make_evaluate(make_cast(DataType::f16(), make_float(DataType::f32(), 0.5)))));
  EXPECT_EQ(to_string(s),
            "allocate acc[f32 * 16] local {\n"
            "  if ((i < 3)) {\n"
            "    acc[i] = fma(1f, 2f, 3f)\n"
            "  } else {\n"
            "    f16(0.5f)\n"
            "  }\n"
            "}\n");
}

TEST(StructuralTest, EqualityAndHash) {
  Var i("i"), j("j");
  Expr a = i * 4 + j, b = i * 4 + j, c = i * 4 + i;
  EXPECT_TRUE(structural_equal(a, b));
  EXPECT_EQ(structural_hash(a), structural_hash(b));
  EXPECT_FALSE(structural_equal(a, c));
  Var other_i("i");
  EXPECT_FALSE(structural_equal(Expr(i), Expr(other_i)));  // variables by identity
}

TEST(SubstituteTest, ReplacesAndReportsUses) {
  Var i("i"), j("j");
  Expr e = substitute(i * 4 + j, i, j + 1);
  EXPECT_EQ(to_string(e), "(((j + 1)*4) + j)");
  EXPECT_TRUE(uses_var(e, j.node()));
  EXPECT_FALSE(uses_var(e, i.node()));
}

TEST(MutatorTest, UnchangedTreesStayShared) {
  Var i("i");
  Expr e = i * 4 + 1;
  IRMutator m;
  EXPECT_TRUE(m.mutate(e).same_as(e));
  Stmt s = make_for(i, 0, 4, ForKind::Serial, make_evaluate(e));
  EXPECT_TRUE(m.mutate(s).same_as(s));
}

TEST(SeqTest, FlattensAndDropsUndefined) {
  Var i("i");
  Stmt a = make_evaluate(i), b = make_evaluate(i + 1);
  Stmt s = make_seq({a, Stmt(), make_seq({b, a})});
  ASSERT_NE(s.as<SeqNode>(), nullptr);
  EXPECT_EQ(s.as<SeqNode>()->stmts.size(), 3u);
  EXPECT_TRUE(make_seq({a}).same_as(a));
}

}  // namespace
}  // namespace kiln::ir
