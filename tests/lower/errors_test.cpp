// Bad schedules and kernel signatures: each must fail with a UserError whose message
// names the stage, loop or tensor at fault.
#include "tests/lower/lower_test_util.h"

namespace kiln::lower_test {
namespace {

using te::compute;
using te::placeholder;
using te::reduce_axis;
using te::sum;

// C[i, j] = (A[i, j] * 2) + 1 through B, and D = A - 1 beside it; R[i] = sum_k A[i, k].
class ScheduleErrorTest : public ::testing::Test {
 protected:
  Tensor A = placeholder({16, 16}, DataType::f32(), "A");
  Tensor B = compute({16, 16}, [&](Var i, Var j) { return A(i, j) * 2; }, "B");
  Tensor C = compute({16, 16}, [&](Var i, Var j) { return B(i, j) + 1; }, "C");
  Tensor D = compute({16, 16}, [&](Var i, Var j) { return A(i, j) - 1; }, "D");
  IterVar k = reduce_axis(16, "k");
  Tensor R = compute({16}, [&](Var i) { return sum(A(i, k), {k}); }, "R");
};

// `stmt` must throw a UserError whose message contains `substring`.
#define EXPECT_USER_ERROR(stmt, substring)                                   \
  do {                                                                       \
    std::string msg_ = user_error_of([&] { stmt; });                         \
    EXPECT_NE(msg_.find(substring), std::string::npos) << "message: " << msg_; \
  } while (0)

TEST_F(ScheduleErrorTest, VectorizeOfNonConstantExtent) {
  Var n("n");
  Tensor X = placeholder({n}, DataType::f32(), "X");
  Tensor Y = compute({n}, [&](Var i) { return X(i) + 1; }, "Y");
  Schedule s({Y});
  s[Y].vectorize(s[Y].axis(0));
  EXPECT_USER_ERROR(lower_verified(s, {X, Y}, "k"),
                    "vectorize of loop 'i' needs a constant extent, but it is n");
}

TEST_F(ScheduleErrorTest, UnrollOfNonConstantExtent) {
  Var n("n");
  Tensor X = placeholder({n}, DataType::f32(), "X");
  Tensor Y = compute({n}, [&](Var i) { return X(i) + 1; }, "Y");
  Schedule s({Y});
  s[Y].unroll(s[Y].axis(0));
  EXPECT_USER_ERROR(lower_verified(s, {X, Y}, "k"),
                    "unroll of loop 'i' needs a constant extent, but it is n");
}

TEST_F(ScheduleErrorTest, UnrollOfTooManyCopies) {
  Tensor X = placeholder({5000}, DataType::f32(), "X");
  Tensor Y = compute({5000}, [&](Var i) { return X(i) + 1; }, "Y");
  Schedule s({Y});
  s[Y].unroll(s[Y].axis(0));
  EXPECT_USER_ERROR(lower_verified(s, {X, Y}, "k"), "unroll of loop 'i' would make 5000 copies");
}

TEST_F(ScheduleErrorTest, SymbolicShapeIsNotBound) {
  // `n` is not one of the kernel's run-time sizes: nothing gives it a value.
  Var n("n");
  Tensor X = placeholder({n}, DataType::f32(), "X");
  Tensor Y = compute({n}, [&](Var i) { return X(i) + 1; }, "Y");
  Schedule s({Y});
  std::string msg = user_error_of([&] { lower_verified(s, {X, Y}, "k"); });
  EXPECT_NE(msg.find("kernel 'k'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'n'"), std::string::npos) << msg;
}

TEST_F(ScheduleErrorTest, RunTimeSizesComeFromAnI64VectorArgument) {
  Var n("n");
  Tensor X = placeholder({n}, DataType::f32(), "X");
  Tensor Y = compute(
      {n}, [&](Var i) { return X(i) + 1; }, "Y");
  Tensor f32_sizes = placeholder({1}, DataType::f32(), "sizes");
  Schedule s({Y});
  EXPECT_USER_ERROR(lower::lower(s, {f32_sizes, X, Y}, "k", {}, {f32_sizes, {n}}),
                    "kernel 'k' takes run-time sizes from 'sizes', which must be one of its "
                    "arguments, an i64 vector");
  Tensor sizes = placeholder({1}, DataType::i64(), "sizes");
  EXPECT_USER_ERROR(lower::lower(s, {X, Y}, "k", {}, {sizes, {n}}), "which must be one of its");
}

TEST_F(ScheduleErrorTest, ComputeAtIntoAStageThatDoesNotReadIt) {
  Schedule s({C, D});
  s[B].compute_at(s[D], s[D].axis(0));
  EXPECT_USER_ERROR(lower_verified(s, {A, C, D}, "k"),
                    "compute_at: 'B' is read by 'C', which is neither 'D' nor computed inside");
}

TEST_F(ScheduleErrorTest, ComputeAtInsideTheLoopWhereItsConsumerIsComputed) {
  // C is computed at D's outer loop; B, which C reads, cannot go further in than that.
  Tensor E = compute({16, 16}, [&](Var i, Var j) { return C(i, j) * 3; }, "E");
  Schedule s({E});
  s[C].compute_at(s[E], s[E].axis(0));
  s[B].compute_at(s[E], s[E].axis(1));
  EXPECT_USER_ERROR(lower_verified(s, {A, E}, "k"),
                    "'B' is read by 'C', which is neither 'E' nor computed inside its loop 'j'");
}

TEST_F(ScheduleErrorTest, ComputeAtIntoAnInlinedStage) {
  Tensor E = compute({16, 16}, [&](Var i, Var j) { return C(i, j) * 3; }, "E");
  Schedule s({E});
  s[B].compute_at(s[C], s[C].axis(0));
  s[C].compute_inline();
  EXPECT_USER_ERROR(lower_verified(s, {A, E}, "k"),
                    "'B' is attached inside 'C', which is inlined");
}

TEST_F(ScheduleErrorTest, ComputeAtOfAnOutputOrAPlaceholder) {
  Schedule s({C, D});
  EXPECT_USER_ERROR(s[C].compute_at(s[D], s[D].axis(0)), "'C' is an output of the kernel");
  EXPECT_USER_ERROR(s[A].compute_at(s[D], s[D].axis(0)), "'A' is a placeholder");
  EXPECT_USER_ERROR(s[B].compute_at(s[C], s[D].axis(0)),
                    "compute_at on stage 'C': 'i' is not one of its current loops");
}

TEST_F(ScheduleErrorTest, SplitOfALoopThatWasAlreadySplit) {
  Schedule s({C});
  IterVar i = s[C].axis(0);
  s[C].split(i, 4);
  EXPECT_USER_ERROR(s[C].split(i, 2),
                    "split on stage 'C': 'i' is not one of its current loops (i.outer, i.inner, j)");
}

TEST_F(ScheduleErrorTest, SplitByANonPositiveFactor) {
  Schedule s({C});
  EXPECT_USER_ERROR(s[C].split(s[C].axis(0), 0), "split factor of 'i' must be positive, got 0");
  EXPECT_USER_ERROR(s[C].split_nparts(s[C].axis(0), -2), "split nparts of 'i' must be positive");
}

TEST_F(ScheduleErrorTest, FuseOfNonAdjacentLoops) {
  Schedule s({C});
  auto [io, ii] = s[C].split(s[C].axis(0), 4);
  EXPECT_USER_ERROR(s[C].fuse(io, s[C].axis(1)),
                    "fuse on stage 'C': 'i.outer' and 'j' must be adjacent loops");
  EXPECT_USER_ERROR(s[C].fuse(ii, io), "must be adjacent loops, outer first");
}

TEST_F(ScheduleErrorTest, FuseOfSpatialAndReductionLoops) {
  Schedule s({R});
  EXPECT_USER_ERROR(s[R].fuse(s[R].axis(0), k),
                    "fuse on stage 'R': cannot fuse a reduction loop with a spatial one");
}

TEST_F(ScheduleErrorTest, ReorderNamingALoopTwice) {
  Schedule s({C});
  EXPECT_USER_ERROR(s[C].reorder({s[C].axis(0), s[C].axis(0)}),
                    "reorder on stage 'C': a loop is named twice");
}

TEST_F(ScheduleErrorTest, ParallelOnAReductionAxis) {
  Schedule s({R});
  EXPECT_USER_ERROR(s[R].parallel(k), "parallel on stage 'R': 'k' is a reduction loop");
  auto [ko, ki] = s[R].split(k, 4);
  EXPECT_USER_ERROR(s[R].parallel(ko), "'k.outer' is a reduction loop");
}

TEST_F(ScheduleErrorTest, ComputeInlineOfAReduction) {
  Tensor R2 = compute({16}, [&](Var i) { return R(i) * 2; }, "R2");
  Schedule s({R2});
  EXPECT_USER_ERROR(s[R].compute_inline(), "compute_inline: 'R' is a reduction");
}

TEST_F(ScheduleErrorTest, ComputeInlineOfAnOutput) {
  Schedule s({C});
  EXPECT_USER_ERROR(s[C].compute_inline(), "compute_inline: 'C' is an output of the kernel");
}

TEST_F(ScheduleErrorTest, UnknownAxisIndex) {
  Schedule s({C, R});
  EXPECT_USER_ERROR(s[C].axis(2), "stage 'C' has 2 axes; axis(2) does not exist");
  EXPECT_USER_ERROR(s[C].reduce_axis(0),
                    "stage 'C' has 0 reduce axes; reduce_axis(0) does not exist");
  EXPECT_USER_ERROR(s[R].reduce_axis(1),
                    "stage 'R' has 1 reduce axes; reduce_axis(1) does not exist");
}

TEST_F(ScheduleErrorTest, TensorNotInTheSchedule) {
  Schedule s({D});
  EXPECT_USER_ERROR(s[C], "tensor 'C' is not part of this schedule");
}

te::TensorIntrin dummy_intrin(std::vector<int64_t> extents) {
  te::TensorIntrin in;
  in.name = "dummy";
  in.extents = std::move(extents);
  in.emit = [](const te::TensorizeRegion&) {
    return ir::make_evaluate(ir::make_call(DataType::i32(), "dummy", {}));
  };
  return in;
}

TEST_F(ScheduleErrorTest, TensorizeWithMismatchedExtents) {
  Schedule s({C});
  auto [jo, ji] = s[C].split(s[C].axis(1), 4);
  // The wrong number of loops is caught when scheduling...
  EXPECT_USER_ERROR(s[C].tensorize(ji, dummy_intrin({4, 4})),
                    "tensorize on stage 'C': intrinsic 'dummy' covers 2 loops but 'j.inner' has 1");
  // ...the wrong extents once lowering knows them.
  s[C].tensorize(ji, dummy_intrin({8}));
  EXPECT_USER_ERROR(lower_verified(s, {A, C}, "k"),
                    "tensorize on 'C': intrinsic 'dummy' needs loop extents that match");
}

TEST_F(ScheduleErrorTest, TensorizeOfAPartialTile) {
  Schedule s({C});
  auto [jo, ji] = s[C].split(s[C].axis(1), 5);
  s[C].tensorize(ji, dummy_intrin({5}));
  EXPECT_USER_ERROR(lower_verified(s, {A, C}, "k"), "do not cover whole tiles");
}

TEST_F(ScheduleErrorTest, TensorizeOutsideTheReduction) {
  Schedule s({R});
  s[R].tensorize(s[R].axis(0), dummy_intrin({16, 16}));
  EXPECT_USER_ERROR(lower_verified(s, {A, R}, "k"),
                    "tensorize on 'R': loop 'i' is outside the first reduction loop");
}

TEST_F(ScheduleErrorTest, KernelInputMissingFromTheArguments) {
  Schedule s({C});
  EXPECT_USER_ERROR(lower_verified(s, {C}, "k"),
                    "input 'A' is read but is not among the kernel arguments");
}

TEST_F(ScheduleErrorTest, KernelOutputMissingFromTheArguments) {
  Schedule s({C});
  EXPECT_USER_ERROR(lower_verified(s, {A}, "k"),
                    "output 'C' is not among the kernel arguments");
}

TEST_F(ScheduleErrorTest, CacheWriteAfterScheduling) {
  Schedule s({C});
  s[C].split(s[C].axis(0), 4);
  EXPECT_USER_ERROR(s.cache_write(C), "cache_write: 'C' was already scheduled");
}

TEST_F(ScheduleErrorTest, CacheReadForAStageThatDoesNotReadIt) {
  Schedule s({C, D});
  EXPECT_USER_ERROR(s.cache_read(B, ir::MemScope::Local, {D}), "cache_read: 'D' does not read 'B'");
}

}  // namespace
}  // namespace kiln::lower_test
