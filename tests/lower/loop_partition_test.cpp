// partition_loops: peeling the iterations where a guard may fail off the ones where it
// provably holds, on hand-built loops and on the tiles that schedule_ops guards.
#include "compiler/lower/loop_partition.h"

#include "tests/lower/lower_test_util.h"

namespace kiln::lower_test {
namespace {

using ir::ForKind;
using ir::make_for;
using ir::make_if;
using ir::make_load;
using ir::make_store;

class LoopPartitionTest : public ::testing::Test {
 protected:
  ir::Buffer A = ir::make_buffer("A", DataType::f32(), {64});
  ir::Buffer B = ir::make_buffer("B", DataType::f32(), {64});
  Var i{"i"};
  // B[i] = A[i]
  Stmt copy() const { return make_store(B, make_load(A, {i}), {i}); }
  std::string partition(const Stmt& s) const { return ir::to_string(lower::partition_loops(s)); }
};

TEST_F(LoopPartitionTest, LessThanGuardSplitsTheLoop) {
  Stmt s = make_for(i, 0, 10, ForKind::Serial,
                    make_if(i < 7, copy(), make_store(B, ir::make_zero(DataType::f32()), {i})));
  EXPECT_EQ(partition(s), ir(R"(
for (i, 0, 7) {
  B[i] = A[i]
}
for (i, 7, 3) {
  B[i] = 0f
}
)"));
}

TEST_F(LoopPartitionTest, GuardFalseOnTheTailDropsIt) {
  // 2i <= 9 holds for i <= 4; the tail has nothing to do.
  Stmt s = make_for(i, 0, 10, ForKind::Serial, make_if(i * 2 <= 9, copy()));
  EXPECT_EQ(partition(s), ir(R"(
for (i, 0, 5) {
  B[i] = A[i]
}
)"));
}

TEST_F(LoopPartitionTest, AlwaysTrueGuardIsRemovedWithoutSplitting) {
  Stmt s = make_for(i, 0, 10, ForKind::Serial, make_if(i < 20, copy()));
  EXPECT_EQ(partition(s), ir(R"(
for (i, 0, 10) {
  B[i] = A[i]
}
)"));
}

TEST_F(LoopPartitionTest, NonLinearGuardStaysGuarded) {
  Stmt s = make_for(i, 0, 10, ForKind::Serial, make_if(i * i < 9, copy()));
  EXPECT_EQ(partition(s), ir(R"(
for (i, 0, 10) {
  if (((i*i) < 9)) {
    B[i] = A[i]
  }
}
)"));
}

TEST_F(LoopPartitionTest, LoopKindIsKeptOnBothParts) {
  Var j("j");
  // for i in [0, 3): parallel over j, the guard j + 4*i < 10 fails in the last rows only.
  Stmt body = make_if(j + i * 4 < 10, make_store(B, make_load(A, {i * 4 + j}), {i * 4 + j}));
  Stmt s = make_for(i, 0, 3, ForKind::Parallel, make_for(j, 0, 4, ForKind::Vectorized, body));
  EXPECT_EQ(partition(s), ir(R"(
parallel (i, 0, 2) {
  vectorized (j, 0, 4) {
    B[((i*4) + j)] = A[((i*4) + j)]
  }
}
vectorized (j, 0, 2) {
  B[(j + 8)] = A[(j + 8)]
}
)"));
}

TEST(LoopPartitionPipelineTest, TwoDimensionalTilesPeelFourWays) {
  Tensor A = te::placeholder({10, 6}, DataType::f32(), "A");
  Tensor B = te::compute({10, 6}, [&](Var i, Var j) { return A(i, j) * 2; }, "B");
  Schedule s({B});
  s[B].tile(s[B].axis(0), s[B].axis(1), 4, 4);
  // Whole tiles, the partial column tile, the partial row tile and the corner; the
  // single-iteration j.outer loops vanish.
  EXPECT_EQ(ir_after(s, {A, B}, "partition_loops"), ir(R"(
for (i.outer, 0, 2) {
  for (i.inner, 0, 4) {
    for (j.inner, 0, 4) {
      B[((i.outer*4) + i.inner), j.inner] = (A[((i.outer*4) + i.inner), j.inner]*2f)
    }
  }
  for (i.inner, 0, 4) {
    for (j.inner, 0, 2) {
      B[((i.outer*4) + i.inner), (j.inner + 4)] = (A[((i.outer*4) + i.inner), (j.inner + 4)]*2f)
    }
  }
}
for (i.inner, 0, 2) {
  for (j.inner, 0, 4) {
    B[(i.inner + 8), j.inner] = (A[(i.inner + 8), j.inner]*2f)
  }
}
for (i.inner, 0, 2) {
  for (j.inner, 0, 2) {
    B[(i.inner + 8), (j.inner + 4)] = (A[(i.inner + 8), (j.inner + 4)]*2f)
  }
}
)"));
}

}  // namespace
}  // namespace kiln::lower_test
