// The behaviour derived from each node's fields(): the visitor's walk, the mutator's
// rebuild, structural equality and hashing, checked on every node kind.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "compiler/ir/functor.h"
#include "compiler/ir/op.h"
#include "compiler/ir/printer.h"
#include "compiler/ir/structural.h"

namespace kiln::ir {
namespace {

// Shared variables and buffers; every call of a make_* method builds fresh nodes, so two
// calls give structurally equal trees that share no node.
struct Samples {
  Var i{"i"}, j{"j"}, x{"x", DataType::f32()};
  Buffer a = make_buffer("A", DataType::f32(), {64});
  Buffer local = make_buffer("L", DataType::f32(), {4}, MemScope::Local);
  IterVar r = make_iter_var("r", 0, 4, IterKind::Reduce);

  // One expression of every node kind, each using `i` somewhere below it.
  std::vector<Expr> exprs() const {
    return {
        i + 1,
        !(i < 3),
        make_select(i < 2, x, x * 2),
        make_cast(DataType::f16(), make_load(a, {i})),
        make_load(a, {i}, i > 0),
        make_ramp(i, 2, 4),
        make_broadcast(i * 3, 8),
        make_call(DataType::f32(), "fma", {x, x, make_cast(DataType::f32(), i)}),
        make_let(j, i * 2, j + 1),
        make_reduce(ReduceOp::Sum, make_load(a, {i + r->var}), {r}),
    };
  }
  // One statement of every node kind, each using `i` somewhere below it.
  std::vector<Stmt> stmts() const {
    return {
        make_let_stmt(j, i + 1, make_store(a, x, {j})),
        make_store(a, x, {i}, i < 60),
        make_for(i, 0, 64, ForKind::Unrolled, make_store(a, x, {i}), {{"unroll_explicit", 1}}),
        make_allocate(local, make_evaluate(i)),
        make_seq({make_evaluate(i), make_evaluate(j)}),
        make_if(i < 3, make_evaluate(i), make_evaluate(j)),
        make_evaluate(i * 5),
    };
  }
};

// Replaces `from` by `to` wherever it is used.
class Replace : public IRMutator {
 public:
  Replace(const Var& from, Expr to) : from_(from), to_(std::move(to)) {}
  using IRMutator::mutate;

 protected:
  Expr mutate(const VarNode* op, const Expr& self) override {
    return op == from_.node() ? to_ : self;
  }

 private:
  Var from_;
  Expr to_;
};

TEST(FieldsTest, MutatorKeepsUnchangedNodes) {
  Samples s;
  IRMutator identity;
  for (const Expr& e : s.exprs()) EXPECT_TRUE(identity.mutate(e).same_as(e)) << e;
  for (const Stmt& st : s.stmts()) EXPECT_TRUE(identity.mutate(st).same_as(st)) << st;
}

TEST(FieldsTest, MutatorRebuildsWhereAChildChanged) {
  Samples s;
  Var k("k");
  Replace i_to_k(s.i, k);
  Samples with_k = s;
  with_k.i = k;
  std::vector<Expr> before = s.exprs(), want = with_k.exprs();
  for (size_t n = 0; n < before.size(); ++n) {
    Expr after = i_to_k.mutate(before[n]);
    EXPECT_EQ(after.kind(), before[n].kind());
    EXPECT_EQ(to_string(after), to_string(want[n]));
  }
  // The loop's own variable is a binding, not a use: the body changes, the header keeps i.
  EXPECT_EQ(to_string(i_to_k.mutate(s.stmts()[2])),
            "unrolled (i, 0, 64) pragma(unroll_explicit=1) {\n  A[k] = x\n}\n");
}

TEST(FieldsTest, MutatorRetypesRebuiltNodes) {
  Samples s;
  Replace widen(s.i, make_ramp(0, 1, 8));
  Expr load = widen.mutate(make_load(s.a, {s.i}) * 2);
  EXPECT_EQ(load.type(), DataType::f32(8));
  EXPECT_EQ(to_string(load), "(A[ramp(0, 1, 8)]*x8(2f))");
}

TEST(FieldsTest, MutatorDropsLoopsAndConditionalsThatLostTheirBody) {
  Samples s;
  class DropEvaluate : public IRMutator {
   public:
    using IRMutator::mutate;

   protected:
    Stmt mutate(const EvaluateNode*, const Stmt&) override { return Stmt(); }
  } drop;
  Stmt empty_loop = make_for(s.i, 0, 4, ForKind::Serial, make_evaluate(s.i));
  EXPECT_FALSE(drop.mutate(empty_loop).defined());
  EXPECT_FALSE(drop.mutate(make_if(s.i < 2, make_evaluate(s.i))).defined());
  Stmt else_only = make_if(s.i < 2, make_evaluate(s.i), make_store(s.a, s.x, {s.i}));
  EXPECT_EQ(to_string(drop.mutate(else_only)), "if (!(i < 2)) {\n  A[i] = x\n}\n");
}

TEST(FieldsTest, VisitorWalksChildrenInFieldOrderButNotBindings) {
  Samples s;
  std::vector<std::string> seen;
  auto record = [&](const Expr& e) {
    if (e.as<VarNode>()) seen.push_back(to_string(e));
  };
  for_each_expr(make_store(s.a, s.x, {s.i}, s.j < 2), record);
  EXPECT_EQ(seen, (std::vector<std::string>{"x", "i", "j"}));  // value, indices, predicate
  seen.clear();
  Stmt loop = make_for(s.i, s.j, 4, ForKind::Serial, make_let_stmt(s.j, s.i, make_evaluate(s.x)),
                       {{"pragma", s.x}});
  for_each_expr(loop, record);
  EXPECT_EQ(seen, (std::vector<std::string>{"j", "i", "x"}));  // no bound vars, no pragmas
}

TEST(FieldsTest, EqualTreesCompareAndHashEqual) {
  Samples s;
  std::vector<Expr> e1 = s.exprs(), e2 = s.exprs();
  for (size_t k = 0; k < e1.size(); ++k) {
    EXPECT_FALSE(e1[k].same_as(e2[k]));
    EXPECT_TRUE(structural_equal(e1[k], e2[k])) << e1[k];
    EXPECT_EQ(structural_hash(e1[k]), structural_hash(e2[k])) << e1[k];
    for (size_t m = 0; m < e1.size(); ++m)
      if (m != k) EXPECT_FALSE(structural_equal(e1[k], e2[m])) << e1[k] << " vs " << e2[m];
  }
  std::vector<Stmt> s1 = s.stmts(), s2 = s.stmts();
  for (size_t k = 0; k < s1.size(); ++k) {
    EXPECT_FALSE(s1[k].same_as(s2[k]));
    EXPECT_TRUE(structural_equal(s1[k], s2[k])) << s1[k];
    EXPECT_EQ(structural_hash(s1[k]), structural_hash(s2[k])) << s1[k];
    for (size_t m = 0; m < s1.size(); ++m)
      if (m != k) EXPECT_FALSE(structural_equal(s1[k], s2[m])) << s1[k] << " vs " << s2[m];
  }
}

TEST(FieldsTest, AnyFieldThatDiffersMakesTreesUnequal) {
  Samples s;
  Var other_j("j");
  IterVar other_r = make_iter_var("r", 0, 4, IterKind::Reduce);
  Buffer other_a = make_buffer("A", DataType::f32(), {64});
  const std::vector<std::pair<Expr, Expr>> exprs = {
      {make_int(DataType::i32(), 1), make_int(DataType::i32(), 2)},
      {make_float(DataType::f32(), 1), make_float(DataType::f32(), 1.5)},
      {make_string("a"), make_string("b")},
      {s.i + 1, s.i - 1},          // binary kind
      {min(s.i, 1), min(s.i, 2)},  // binary operand
      {make_cast(DataType::f16(), s.x), make_cast(DataType::bf16(), s.x)},
      {make_load(s.a, {s.i}), make_load(other_a, {s.i})},       // buffer identity
      {make_load(s.a, {s.i}), make_load(s.a, {s.i}, s.i > 0)},  // optional predicate
      {make_ramp(s.i, 1, 4), make_ramp(s.i, 2, 4)},
      {make_broadcast(s.x, 4), make_broadcast(s.x + 1, 4)},
      {make_call(DataType::f32(), "exp", {s.x}), make_call(DataType::f32(), "log", {s.x})},
      {make_call(DataType::i32(), "f", {s.x}, CallKind::Pure),
       make_call(DataType::i32(), "f", {s.x}, CallKind::Reinterpret)},
      {make_call(DataType::f32(), "f", {s.x}), make_call(DataType::f32(), "f", {s.x, s.x})},
      {make_let(s.j, 1, s.j), make_let(other_j, 1, other_j)},  // bound variable identity
      {make_reduce(ReduceOp::Sum, s.x, {s.r}), make_reduce(ReduceOp::Max, s.x, {s.r})},
      {make_reduce(ReduceOp::Sum, s.x, {s.r}), make_reduce(ReduceOp::Sum, s.x, {other_r})},
  };
  for (const auto& [a, b] : exprs) EXPECT_FALSE(structural_equal(a, b)) << a << " vs " << b;

  Stmt body = make_evaluate(s.i);
  const std::vector<std::pair<Stmt, Stmt>> stmts = {
      {make_for(s.i, 0, 4, ForKind::Serial, body), make_for(s.i, 0, 4, ForKind::Parallel, body)},
      {make_for(s.i, 0, 4, ForKind::Serial, body, {{"p", 1}}),
       make_for(s.i, 0, 4, ForKind::Serial, body, {{"p", 2}})},
      {make_if(s.i < 1, body), make_if(s.i < 1, body, body)},
      {make_store(s.a, s.x, {s.i}), make_store(s.a, s.x, {s.i}, s.i < 1)},
      {make_let_stmt(s.j, 1, body), make_let_stmt(other_j, 1, body)},
      {make_seq({body, body}), make_seq({body, body, body})},
  };
  for (const auto& [a, b] : stmts) {
    EXPECT_FALSE(structural_equal(a, b)) << a << " vs " << b;
    EXPECT_TRUE(structural_equal(a, a));
  }
}

}  // namespace
}  // namespace kiln::ir
