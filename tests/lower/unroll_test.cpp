// unroll_loops: an unrolled loop becomes copies of its body with constant indices.
#include "compiler/lower/unroll.h"

#include "compiler/ir/simplify.h"

#include "tests/lower/lower_test_util.h"

namespace kiln::lower_test {
namespace {

using ir::ForKind;
using ir::make_for;
using ir::make_load;
using ir::make_store;

TEST(UnrollTest, CopiesWithTheLoopVariableReplaced) {
  ir::Buffer A = ir::make_buffer("A", DataType::f32(), {8});
  ir::Buffer B = ir::make_buffer("B", DataType::f32(), {8});
  Var i("i"), j("j");
  Stmt s = make_for(i, 2, 2, ForKind::Unrolled,
                    make_for(j, 0, 2, ForKind::Unrolled,
                             make_store(B, make_load(A, {i * 2 + j}), {i * 2 + j})));
  // The pass substitutes min + copy; final_simplify folds the constants.
  EXPECT_EQ(ir::to_string(lower::unroll_loops(s)), ir(R"(
B[(((2 + 0)*2) + (0 + 0))] = A[(((2 + 0)*2) + (0 + 0))]
B[(((2 + 0)*2) + (0 + 1))] = A[(((2 + 0)*2) + (0 + 1))]
B[(((2 + 1)*2) + (0 + 0))] = A[(((2 + 1)*2) + (0 + 0))]
B[(((2 + 1)*2) + (0 + 1))] = A[(((2 + 1)*2) + (0 + 1))]
)"));
  EXPECT_EQ(ir::to_string(ir::simplify(lower::unroll_loops(s))), ir(R"(
B[4] = A[4]
B[5] = A[5]
B[6] = A[6]
B[7] = A[7]
)"));
}

TEST(UnrollTest, OtherLoopsAreLeftAlone) {
  ir::Buffer B = ir::make_buffer("B", DataType::f32(), {8});
  Var i("i");
  Stmt s = make_for(i, 0, 8, ForKind::Serial, make_store(B, ir::make_zero(DataType::f32()), {i}));
  EXPECT_TRUE(lower::unroll_loops(s).same_as(s));
}

TEST(UnrollPipelineTest, UnrolledInnerLoopHasConstantOffsets) {
  Tensor A = te::placeholder({4, 4}, DataType::f32(), "A");
  Tensor B = te::compute({4, 4}, [&](Var i, Var j) { return A(i, j) + 1; }, "B");
  Schedule s({B});
  s[B].unroll(s[B].axis(1));
  EXPECT_EQ(lowered(s, {A, B}), ir(R"(
for (i, 0, 4) {
  B[(i*4)] = (A[(i*4)] + 1f)
  B[((i*4) + 1)] = (A[((i*4) + 1)] + 1f)
  B[((i*4) + 2)] = (A[((i*4) + 2)] + 1f)
  B[((i*4) + 3)] = (A[((i*4) + 3)] + 1f)
}
)"));
}

TEST(UnrollPipelineTest, PeeledTailIsUnrolledWithItsOwnExtent) {
  Tensor A = te::placeholder({10}, DataType::f32(), "A");
  Tensor B = te::compute({10}, [&](Var i) { return A(i) + 1; }, "B");
  Schedule s({B});
  auto [io, ii] = s[B].split(s[B].axis(0), 4);
  s[B].unroll(ii);
  EXPECT_EQ(lowered(s, {A, B}), ir(R"(
for (i.outer, 0, 2) {
  B[(i.outer*4)] = (A[(i.outer*4)] + 1f)
  B[((i.outer*4) + 1)] = (A[((i.outer*4) + 1)] + 1f)
  B[((i.outer*4) + 2)] = (A[((i.outer*4) + 2)] + 1f)
  B[((i.outer*4) + 3)] = (A[((i.outer*4) + 3)] + 1f)
}
B[8] = (A[8] + 1f)
B[9] = (A[9] + 1f)
)"));
}

}  // namespace
}  // namespace kiln::lower_test
