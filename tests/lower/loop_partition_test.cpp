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

// B[i] = A[i] * 2 over a length n taken at run time, split by 8 (the inner loop vectorized
// when asked), lowered and printed.
std::string doubled_at_run_time_length(bool vectorize) {
  Var n("n");
  Tensor sizes = te::placeholder({1}, DataType::i64(), "sizes");
  Tensor A = te::placeholder({n}, DataType::f32(), "A");
  Tensor B = te::compute(
      {n}, [&](Var i) { return A(i) * 2; }, "B");
  Schedule s({B});
  auto [outer, inner] = s[B].split(s[B].axis(0), 8);
  if (vectorize) s[B].vectorize(inner);
  lower::LowerOptions o;
  o.verify_each_pass = true;
  return ir::to_string(lower::lower(s, {sizes, A, B}, "kernel", o, {sizes, {n}}).body);
}

// A kernel that takes its length at run time: the split loop runs a guard-free main part
// of floor(n/8) iterations, then the guarded tail (whose own inner loop splits the same
// way); n is read from the sizes argument.
TEST(LoopPartitionPipelineTest, ARunTimeLengthSplitsAtARunTimeExtent) {
  EXPECT_EQ(doubled_at_run_time_length(false), ir(R"(
let n = sizes[0]
for (i.outer, 0, min(max((n / 8), 0), ((n + 7) / 8))) {
  for (i.inner, 0, 8) {
    B[((i.outer*8) + i.inner)] = (A[((i.outer*8) + i.inner)]*2f)
  }
}
for (i.outer, min(max((n / 8), 0), ((n + 7) / 8)), (((n + 7) / 8) - min(max((n / 8), 0), ((n + 7) / 8)))) {
  for (i.inner, 0, min(max(((i.outer*-8) + n), 0), 8)) {
    B[((i.outer*8) + i.inner)] = (A[((i.outer*8) + i.inner)]*2f)
  }
  for (i.inner, min(max(((i.outer*-8) + n), 0), 8), ((min(max(((i.outer*-8) + n), 0), 8)*-1) + 8)) {
    if ((((i.outer*8) + i.inner) < n)) {
      B[((i.outer*8) + i.inner)] = (A[((i.outer*8) + i.inner)]*2f)
    }
  }
}
)"));
}

// Vector loops keep constant extents: the tail's guard stays inside its lanes' loop, where,
// being a guard against a run-time size, it becomes the mask of one vector load and store.
TEST(LoopPartitionPipelineTest, ARunTimeTailOfVectorsIsMasked) {
  EXPECT_EQ(doubled_at_run_time_length(true), ir(R"(
let n = sizes[0]
for (i.outer, 0, min(max((n / 8), 0), ((n + 7) / 8))) {
  B[ramp((i.outer*8), 1, 8)] = (A[ramp((i.outer*8), 1, 8)]*x8(2f))
}
for (i.outer, min(max((n / 8), 0), ((n + 7) / 8)), (((n + 7) / 8) - min(max((n / 8), 0), ((n + 7) / 8)))) {
  B[ramp((i.outer*8), 1, 8)] = (A[ramp((i.outer*8), 1, 8)] if (ramp((i.outer*8), 1, 8) < x8(n))*x8(2f)) if (ramp((i.outer*8), 1, 8) < x8(n))
}
)"));
}

}  // namespace
}  // namespace kiln::lower_test
