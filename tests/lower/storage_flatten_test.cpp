// flatten_storage: multi-dimensional accesses become one row-major index.
#include "compiler/lower/storage_flatten.h"

#include "tests/lower/lower_test_util.h"

namespace kiln::lower_test {
namespace {

using ir::ForKind;
using ir::make_for;
using ir::make_load;
using ir::make_store;

TEST(StorageFlattenTest, ThreeDimensionalBuffersAndALocalTile) {
  ir::Buffer X = ir::make_buffer("X", DataType::f32(), {2, 3, 4});
  ir::Buffer Y = ir::make_buffer("Y", DataType::f32(), {2, 3, 4});
  ir::Buffer T = ir::make_buffer("T", DataType::f32(), {3, 4}, ir::MemScope::Local);
  Var i("i"), j("j"), k("k");
  auto nest = [&](Stmt body) {
    return make_for(j, 0, 3, ForKind::Serial, make_for(k, 0, 4, ForKind::Serial, body));
  };
  Stmt s = make_for(
      i, 0, 2, ForKind::Serial,
      ir::make_allocate(
          T, ir::make_seq({nest(make_store(T, make_load(X, {i, j, k}), {j, k})),
                           nest(make_store(Y, make_load(T, {j, k}) + make_load(X, {i, 2 - j, k}),
                                           {i, j, k}))})));
  std::vector<ir::Buffer> args = {X, Y};
  EXPECT_EQ(ir::to_string(lower::flatten_storage(s, args)), ir(R"(
for (i, 0, 2) {
  allocate T[f32 * 12] local {
    for (j, 0, 3) {
      for (k, 0, 4) {
        T[((j*4) + k)] = X[(((i*12) + (j*4)) + k)]
      }
    }
    for (j, 0, 3) {
      for (k, 0, 4) {
        Y[(((i*12) + (j*4)) + k)] = (T[((j*4) + k)] + X[((((i*12) - (j*4)) + k) + 8)])
      }
    }
  }
}
)"));
  // The arguments are replaced by their one-dimensional versions.
  for (const ir::Buffer& b : args) {
    ASSERT_EQ(b->shape.size(), 1u) << b->name;
    EXPECT_EQ(ir::to_string(b->shape[0]), "24") << b->name;
  }
  EXPECT_EQ(args[0]->name, "X");
  EXPECT_NE(args[0], X);
}

TEST(StorageFlattenTest, OneDimensionalBuffersAreKept) {
  ir::Buffer X = ir::make_buffer("X", DataType::f32(), {8});
  Var i("i");
  Stmt s = make_for(i, 0, 8, ForKind::Serial, make_store(X, make_load(X, {i}) * 2, {i}));
  std::vector<ir::Buffer> args = {X};
  EXPECT_EQ(ir::to_string(lower::flatten_storage(s, args)), ir(R"(
for (i, 0, 8) {
  X[i] = (X[i]*2f)
}
)"));
  EXPECT_EQ(args[0], X);
}

TEST(StorageFlattenPipelineTest, ThreeDimensionalCompute) {
  Tensor A = te::placeholder({2, 3, 4}, DataType::f32(), "A");
  Tensor B = te::compute({2, 3, 4}, [&](Var i, Var j, Var k) { return A(i, j, k) + 1; }, "B");
  Schedule s({B});
  EXPECT_EQ(ir_after(s, {A, B}, "flatten_storage"), ir(R"(
for (i, 0, 2) {
  for (j, 0, 3) {
    for (k, 0, 4) {
      B[(((i*12) + (j*4)) + k)] = (A[(((i*12) + (j*4)) + k)] + 1f)
    }
  }
}
)"));
  ir::LoweredFunc f = lower_verified(s, {A, B}, "add_one");
  ASSERT_EQ(f.args.size(), 2u);
  EXPECT_EQ(f.args[1]->shape.size(), 1u);
}

}  // namespace
}  // namespace kiln::lower_test
