// vectorize_loops: loop variables become ramps, invariants broadcasts; loops it cannot
// widen (and non-power-of-two extents) stay scalar loops.
#include "compiler/lower/vectorize.h"

#include "tests/lower/lower_test_util.h"

namespace kiln::lower_test {
namespace {

using ir::ForKind;
using ir::make_for;
using ir::make_load;
using ir::make_store;

class VectorizeTest : public ::testing::Test {
 protected:
  ir::Buffer A = ir::make_buffer("A", DataType::f32(), {64});
  ir::Buffer B = ir::make_buffer("B", DataType::f32(), {64});
  Var i{"i"}, j{"j"};
  Expr f32(double v) const { return ir::make_float(DataType::f32(), v); }
  Stmt vloop(Expr extent, Stmt body, Expr min = Expr(0)) const {
    return make_for(i, min, extent, ForKind::Vectorized, std::move(body));
  }
  std::string vectorize(const Stmt& s) const { return ir::to_string(lower::vectorize_loops(s)); }
};

TEST_F(VectorizeTest, RampsAndBroadcasts) {
  EXPECT_EQ(vectorize(vloop(8, make_store(B, make_load(A, {i}) * f32(2), {i}))), ir(R"(
B[ramp(0, 1, 8)] = (A[ramp(0, 1, 8)]*x8(2f))
)"));
}

TEST_F(VectorizeTest, StridesAndOffsets) {
  EXPECT_EQ(vectorize(vloop(4, make_store(B, make_load(A, {i * 2}), {i + 8}), 4)), ir(R"(
B[ramp(12, 1, 4)] = A[ramp(8, 2, 4)]
)"));
}

TEST_F(VectorizeTest, InnerSerialLoopKeepsItsOwnVariable) {
  Stmt body = make_for(j, 0, 3, ForKind::Serial, make_store(B, make_load(A, {i + j}), {i * 4 + j}));
  EXPECT_EQ(vectorize(vloop(4, body)), ir(R"(
for (j, 0, 3) {
  B[ramp(j, 4, 4)] = A[ramp(j, 1, 4)]
}
)"));
}

TEST_F(VectorizeTest, LaneInvariantConditionStaysScalar) {
  Stmt s = make_for(j, 0, 4, ForKind::Serial,
                    vloop(4, ir::make_if(j < 2, make_store(B, make_load(A, {i}), {i}))));
  EXPECT_EQ(vectorize(s), ir(R"(
for (j, 0, 4) {
  if ((j < 2)) {
    B[ramp(0, 1, 4)] = A[ramp(0, 1, 4)]
  }
}
)"));
}

TEST_F(VectorizeTest, SelectCastAndPureCallWiden) {
  Expr v = ir::make_select(i < 2, make_load(A, {i}), ir::make_cast(DataType::f32(), i));
  EXPECT_EQ(vectorize(vloop(4, make_store(B, ir::make_call(DataType::f32(), "exp", {v}), {i}))),
            ir(R"(
B[ramp(0, 1, 4)] = exp(select((ramp(0, 1, 4) < x4(2)), A[ramp(0, 1, 4)], f32x4(ramp(0, 1, 4))))
)"));
}

TEST_F(VectorizeTest, LetBindsAVector) {
  Stmt s = vloop(4, ir::make_let_stmt(j, i * 2, make_store(B, make_load(A, {j}), {i})));
  EXPECT_EQ(vectorize(s), ir(R"(
let j = ramp(0, 2, 4)
B[ramp(0, 1, 4)] = A[j]
)"));
}

// Each of these bodies cannot be widened: the loop stays, as a serial loop.
TEST_F(VectorizeTest, UnvectorizableBodiesStaySerialLoops) {
  ir::Buffer L = ir::make_buffer("L", DataType::f32(), {4}, ir::MemScope::Local);
  Stmt copy = make_store(B, make_load(A, {i}), {i});
  const std::vector<std::pair<const char*, Stmt>> cases = {
      {"every lane stores to one element",
       make_store(B, make_load(B, {0}) + make_load(A, {i}), {0})},
      {"condition differs per lane", ir::make_if(i < 2, copy)},
      {"intrinsic without a vector form",
       make_store(B,
                  ir::make_call(DataType::f32(), "llvm.foo", {make_load(A, {i})},
                                ir::CallKind::LLVMIntrinsic),
                  {i})},
      {"inner loop bound depends on the lane",
       make_for(j, 0, i, ForKind::Serial, make_store(B, make_load(A, {j}), {i}))},
      {"allocation inside the loop", ir::make_allocate(L, copy)},
  };
  for (const auto& [why, body] : cases) {
    std::string out = vectorize(vloop(4, body));
    EXPECT_EQ(out.rfind("for (i, 0, 4) {\n", 0), 0u) << why << ":\n" << out;
    EXPECT_EQ(out.find("ramp"), std::string::npos) << why << ":\n" << out;
  }
}

TEST_F(VectorizeTest, OnlyPowerOfTwoExtentsWiden) {
  Stmt copy = make_store(B, make_load(A, {i}), {i});
  EXPECT_EQ(vectorize(vloop(3, copy)), ir(R"(
for (i, 0, 3) {
  B[i] = A[i]
}
)"));
  EXPECT_EQ(vectorize(vloop(2, copy)), ir(R"(
B[ramp(0, 1, 2)] = A[ramp(0, 1, 2)]
)"));
}

// Through the pipeline: the main tiles and a power-of-two tail become vectors.
TEST(VectorizePipelineTest, PowerOfTwoTailIsVectorized) {
  Tensor A = te::placeholder({20}, DataType::f32(), "A");
  Tensor B = te::compute({20}, [&](Var i) { return A(i) + 1; }, "B");
  Schedule s({B});
  auto [io, ii] = s[B].split(s[B].axis(0), 8);
  s[B].vectorize(ii);
  EXPECT_EQ(ir_after(s, {A, B}, "partition_loops"), ir(R"(
for (i.outer, 0, 2) {
  vectorized (i.inner, 0, 8) {
    B[((i.outer*8) + i.inner)] = (A[((i.outer*8) + i.inner)] + 1f)
  }
}
vectorized (i.inner, 0, 4) {
  B[(i.inner + 16)] = (A[(i.inner + 16)] + 1f)
}
)"));
  EXPECT_EQ(lowered(s, {A, B}), ir(R"(
for (i.outer, 0, 2) {
  B[ramp((i.outer*8), 1, 8)] = (A[ramp((i.outer*8), 1, 8)] + x8(1f))
}
B[ramp(16, 1, 4)] = (A[ramp(16, 1, 4)] + x4(1f))
)"));
}

TEST(VectorizePipelineTest, NonPowerOfTwoTailStaysScalar) {
  Tensor A = te::placeholder({22}, DataType::f32(), "A");
  Tensor B = te::compute({22}, [&](Var i) { return A(i) + 1; }, "B");
  Schedule s({B});
  auto [io, ii] = s[B].split(s[B].axis(0), 8);
  s[B].vectorize(ii);
  EXPECT_EQ(lowered(s, {A, B}), ir(R"(
for (i.outer, 0, 2) {
  B[ramp((i.outer*8), 1, 8)] = (A[ramp((i.outer*8), 1, 8)] + x8(1f))
}
for (i.inner, 0, 6) {
  B[(i.inner + 16)] = (A[(i.inner + 16)] + 1f)
}
)"));
}

TEST(VectorizePipelineTest, ReductionAxisStaysASerialLoop) {
  Tensor A = te::placeholder({4, 16}, DataType::f32(), "A");
  IterVar k = te::reduce_axis(16, "k");
  Tensor B = te::compute({4}, [&](Var i) { return te::sum(A(i, k), {k}); }, "B");
  Schedule s({B});
  s[B].vectorize(k);
  EXPECT_EQ(lowered(s, {A, B}), ir(R"(
for (i, 0, 4) {
  B[i] = 0f
  for (k, 0, 16) {
    B[i] = (B[i] + A[((i*16) + k)])
  }
}
)"));
}

TEST(VectorizePipelineTest, ReductionInitIsVectorizedToo) {
  Tensor A = te::placeholder({4, 16}, DataType::f32(), "A");
  Tensor B = te::placeholder({16, 8}, DataType::f32(), "B");
  IterVar k = te::reduce_axis(16, "k");
  Tensor C = te::compute(
      {4, 8}, [&](Var i, Var j) { return te::sum(A(i, k) * B(k, j), {k}); }, "C");
  Schedule s({C});
  s[C].reorder({k, s[C].axis(0), s[C].axis(1)});
  s[C].vectorize(s[C].axis(1));
  EXPECT_EQ(lowered(s, {A, B, C}), ir(R"(
for (i.init, 0, 4) {
  C[ramp((i.init*8), 1, 8)] = x8(0f)
}
for (k, 0, 16) {
  for (i, 0, 4) {
    C[ramp((i*8), 1, 8)] = (C[ramp((i*8), 1, 8)] + (x8(A[((i*16) + k)])*B[ramp((k*8), 1, 8)]))
  }
}
)"));
}

}  // namespace
}  // namespace kiln::lower_test
