// verify_lowered and verify_ir: IR that codegen could not take, or that no pass should
// leave, is a kiln bug, reported as an InternalError that names the pass before the check.
#include "compiler/lower/verify.h"

#include "tests/lower/lower_test_util.h"

namespace kiln::lower_test {
namespace {

using ir::ForKind;
using ir::make_for;
using ir::make_load;
using ir::make_store;

class VerifyTest : public ::testing::Test {
 protected:
  ir::Buffer A = ir::make_buffer("A", DataType::f32(), {16});
  ir::Buffer B = ir::make_buffer("B", DataType::f32(), {16});
  Var i{"i"};

  // The verifier's message for `body` in a kernel taking A and B, or "" if it passes.
  std::string verify(Stmt body) const {
    ir::LoweredFunc f{"k", {A, B}, std::move(body)};
    try {
      lower::verify_lowered(f, "some_pass");
    } catch (const InternalError& e) {
      return e.what();
    }
    return "";
  }
  Stmt loop(Stmt body, ForKind kind = ForKind::Serial) const {
    return make_for(i, 0, 16, kind, std::move(body));
  }
};

TEST_F(VerifyTest, WellFormedKernelPasses) {
  Var t("t");
  EXPECT_EQ(verify(loop(ir::make_let_stmt(t, i * 2, make_store(B, make_load(A, {t / 2}), {i})))),
            "");
  EXPECT_EQ(verify(make_store(B, make_load(A, {ir::make_ramp(0, 1, 4)}), {ir::make_ramp(0, 1, 4)})),
            "");
}

TEST_F(VerifyTest, RejectsIllFormedIR) {
  ir::Buffer M = ir::make_buffer("M", DataType::f32(), {4, 4});
  ir::Buffer L = ir::make_buffer("L", DataType::f32(), {4}, ir::MemScope::Local);
  Var t("t");
  Stmt copy = make_store(B, make_load(A, {i}), {i});
  const std::vector<std::pair<Stmt, std::string>> cases = {
      {copy, "variable 'i' is used outside its scope"},
      {ir::make_seq({loop(copy), make_store(B, make_load(A, {i}), {0})}),
       "variable 'i' is used outside its scope"},
      {ir::make_seq({ir::make_let_stmt(t, 1, make_store(B, make_load(A, {t}), {0})),
                     make_store(B, make_load(A, {t}), {1})}),
       "variable 't' is used outside its scope"},
      {loop(make_store(L, make_load(A, {i}), {0})), "buffer 'L' is used but not defined"},
      {ir::make_allocate(M, make_store(M, ir::make_zero(DataType::f32()), {0, 1})),
       "access to 'M' is not flattened"},
      {loop(copy, ForKind::Vectorized), "loop 'i' is still marked vectorized"},
      {make_store(B, ir::make_reduce(ir::ReduceOp::Sum, make_load(A, {0}),
                                     {ir::make_iter_var("r", 0, 4, ir::IterKind::Reduce)}),
                  {0}),
       "a reduction is left"},
      {make_store(B, make_load(A, {ir::make_ramp(0, 1, 4)}), {0}),
       "store to 'B' has mismatched value and index lanes"},
  };
  for (const auto& [body, why] : cases) {
    std::string msg = verify(body);
    EXPECT_NE(msg.find("after pass 'some_pass'"), std::string::npos) << msg;
    EXPECT_NE(msg.find(why), std::string::npos) << "expected '" << why << "', got '" << msg
                                                << "' for\n" << body;
  }
}

TEST_F(VerifyTest, StageChecksApplyOnlyOnceEstablished) {
  ir::Buffer M = ir::make_buffer("M", DataType::f32(), {4, 4});
  Stmt two_d_store = make_store(M, make_load(A, {i}), {0, i});
  ir::LoweredFunc f{"k", {A, M}, loop(two_d_store, ForKind::Vectorized)};
  EXPECT_NO_THROW(lower::verify_ir(f, "early_pass", lower::Invariants{}));
  lower::Invariants flat;
  flat.flat_accesses = true;
  EXPECT_THROW(lower::verify_ir(f, "flattening", flat), InternalError);
  lower::Invariants scalar;
  scalar.no_vector_loops = true;
  EXPECT_THROW(lower::verify_ir(f, "vectorizing", scalar), InternalError);
  // Scope, buffers and reductions are checked at every stage.
  f.body = make_store(B, make_load(A, {i}), {0});
  EXPECT_THROW(lower::verify_ir(f, "early_pass", lower::Invariants{}), InternalError);
}

TEST_F(VerifyTest, FreeVariablesAreTheUsersUntilTheEnd) {
  Var n("n"), t("t");
  Stmt body = ir::make_seq({loop(make_store(B, make_load(A, {i + n}), {i})),
                            ir::make_let_stmt(t, n, make_store(B, make_load(A, {t}), {0}))});
  std::vector<const ir::VarNode*> free = lower::free_variables(body);
  ASSERT_EQ(free.size(), 1u);
  EXPECT_EQ(free[0], n.node());
  ir::LoweredFunc f{"k", {A, B}, body};
  EXPECT_NO_THROW(lower::verify_ir(f, "p", lower::Invariants::all(), {n.node()}));
  EXPECT_NE(verify(body).find("variable 'n' is used outside its scope"), std::string::npos);
}

}  // namespace
}  // namespace kiln::lower_test
