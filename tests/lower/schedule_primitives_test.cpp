// Schedule primitives, checked on the loop nest that schedule_ops builds from them (and,
// where a later pass is what makes the primitive pay off, on that pass's output).
#include "tests/lower/lower_test_util.h"

namespace kiln::lower_test {
namespace {

using te::compute;
using te::placeholder;
using te::reduce_axis;
using te::sum;

// B[i] = A[i] * 2 over `n` elements.
struct Scale {
  explicit Scale(int64_t n)
      : A(placeholder({n}, DataType::f32(), "A")),
        B(compute({n}, [&](Var i) { return A(i) * 2; }, "B")),
        s({B}) {}
  Tensor A, B;
  Schedule s;
};

// B[i, j] = A[i, j] + 1.
struct AddOne2D {
  AddOne2D(int64_t m, int64_t n)
      : A(placeholder({m, n}, DataType::f32(), "A")),
        B(compute({m, n}, [&](Var i, Var j) { return A(i, j) + 1; }, "B")),
        s({B}) {}
  Tensor A, B;
  Schedule s;
};

// C[i, j] = sum_k A[i, k] * B[k, j].
struct Matmul {
  Matmul(int64_t m, int64_t n, int64_t kk)
      : A(placeholder({m, kk}, DataType::f32(), "A")),
        B(placeholder({kk, n}, DataType::f32(), "B")),
        k(reduce_axis(kk, "k")),
        C(compute({m, n}, [&](Var i, Var j) { return sum(A(i, k) * B(k, j), {k}); }, "C")),
        s({C}) {}
  Tensor A, B;
  IterVar k;
  Tensor C;
  Schedule s;
};

TEST(SplitTest, DividingFactorNeedsNoGuard) {
  Scale t(64);
  auto [io, ii] = t.s[t.B].split(t.s[t.B].axis(0), 16);
  EXPECT_EQ(io->var.name(), "i.outer");
  EXPECT_EQ(ii->var.name(), "i.inner");
  EXPECT_EQ(ir_after(t.s, {t.A, t.B}, "schedule_ops"), ir(R"(
for (i.outer, 0, 4) {
  for (i.inner, 0, 16) {
    B[((i.outer*16) + i.inner)] = (A[((i.outer*16) + i.inner)]*2f)
  }
}
)"));
}

TEST(SplitTest, NonDividingFactorIsGuardedThenPeeled) {
  Scale t(100);
  t.s[t.B].split(t.s[t.B].axis(0), 8);
  // ceil(100 / 8) = 13 tiles; the last one overshoots, hence the guard.
  EXPECT_EQ(ir_after(t.s, {t.A, t.B}, "schedule_ops"), ir(R"(
for (i.outer, 0, 13) {
  for (i.inner, 0, 8) {
    if ((((i.outer*8) + i.inner) < 100)) {
      B[((i.outer*8) + i.inner)] = (A[((i.outer*8) + i.inner)]*2f)
    }
  }
}
)"));
  // The 12 whole tiles run unguarded; the partial one is a loop of its own.
  EXPECT_EQ(ir_after(t.s, {t.A, t.B}, "partition_loops"), ir(R"(
for (i.outer, 0, 12) {
  for (i.inner, 0, 8) {
    B[((i.outer*8) + i.inner)] = (A[((i.outer*8) + i.inner)]*2f)
  }
}
for (i.inner, 0, 4) {
  B[(i.inner + 96)] = (A[(i.inner + 96)]*2f)
}
)"));
}

TEST(SplitTest, NpartsFixesTheOuterExtent) {
  Scale t(10);
  t.s[t.B].split_nparts(t.s[t.B].axis(0), 3);
  // Three parts of ceil(10 / 3) = 4; the last part is guarded, then peeled.
  EXPECT_EQ(ir_after(t.s, {t.A, t.B}, "schedule_ops"), ir(R"(
for (i.outer, 0, 3) {
  for (i.inner, 0, 4) {
    if ((((i.outer*4) + i.inner) < 10)) {
      B[((i.outer*4) + i.inner)] = (A[((i.outer*4) + i.inner)]*2f)
    }
  }
}
)"));
  EXPECT_EQ(lowered(t.s, {t.A, t.B}), ir(R"(
for (i.outer, 0, 2) {
  for (i.inner, 0, 4) {
    B[((i.outer*4) + i.inner)] = (A[((i.outer*4) + i.inner)]*2f)
  }
}
for (i.inner, 0, 2) {
  B[(i.inner + 8)] = (A[(i.inner + 8)]*2f)
}
)"));
}

TEST(FuseTest, FusedIndexSimplifiesAfterFlattening) {
  AddOne2D t(4, 8);
  IterVar f = t.s[t.B].fuse(t.s[t.B].axis(0), t.s[t.B].axis(1));
  EXPECT_EQ(f->var.name(), "i.j.fused");
  EXPECT_EQ(ir_after(t.s, {t.A, t.B}, "schedule_ops"), ir(R"(
for (i.j.fused, 0, 32) {
  B[(i.j.fused / 8), (i.j.fused % 8)] = (A[(i.j.fused / 8), (i.j.fused % 8)] + 1f)
}
)"));
  // (f / 8)*8 + f % 8 is f again.
  EXPECT_EQ(ir_after(t.s, {t.A, t.B}, "flatten_storage"), ir(R"(
for (i.j.fused, 0, 32) {
  B[i.j.fused] = (A[i.j.fused] + 1f)
}
)"));
}

TEST(FuseTest, SplitThenFuseGivesBackOneLoop) {
  Scale t(64);
  auto [io, ii] = t.s[t.B].split(t.s[t.B].axis(0), 4);
  t.s[t.B].fuse(io, ii);
  EXPECT_EQ(lowered(t.s, {t.A, t.B}), ir(R"(
for (i.outer.i.inner.fused, 0, 64) {
  B[i.outer.i.inner.fused] = (A[i.outer.i.inner.fused]*2f)
}
)"));
}

TEST(ReorderTest, SwapsLoops) {
  AddOne2D t(4, 8);
  t.s[t.B].reorder({t.s[t.B].axis(1), t.s[t.B].axis(0)});
  EXPECT_EQ(ir_after(t.s, {t.A, t.B}, "schedule_ops"), ir(R"(
for (j, 0, 8) {
  for (i, 0, 4) {
    B[i, j] = (A[i, j] + 1f)
  }
}
)"));
}

TEST(TileTest, SplitsBothAxesAndOrdersOuterFirst) {
  AddOne2D t(16, 32);
  auto [io, jo, ii, ji] = t.s[t.B].tile(t.s[t.B].axis(0), t.s[t.B].axis(1), 4, 8);
  ASSERT_EQ(t.s[t.B].leaf_axes().size(), 4u);
  EXPECT_EQ(t.s[t.B].leaf_axes()[1], jo);
  EXPECT_EQ(ir_after(t.s, {t.A, t.B}, "schedule_ops"), ir(R"(
for (i.outer, 0, 4) {
  for (j.outer, 0, 4) {
    for (i.inner, 0, 4) {
      for (j.inner, 0, 8) {
        B[((i.outer*4) + i.inner), ((j.outer*8) + j.inner)] = (A[((i.outer*4) + i.inner), ((j.outer*8) + j.inner)] + 1f)
      }
    }
  }
}
)"));
}

TEST(ReductionTest, InitLandsBeforeTheReductionLoop) {
  Matmul t(4, 8, 16);
  EXPECT_EQ(ir_after(t.s, {t.A, t.B, t.C}, "schedule_ops"), ir(R"(
for (i, 0, 4) {
  for (j, 0, 8) {
    C[i, j] = 0f
    for (k, 0, 16) {
      C[i, j] = (C[i, j] + (A[i, k]*B[k, j]))
    }
  }
}
)"));
}

TEST(ReductionTest, InitCoversTheSpatialLoopsInsideTheReduction) {
  Matmul t(4, 8, 16);
  t.s[t.C].reorder({t.s[t.C].axis(0), t.k, t.s[t.C].axis(1)});
  EXPECT_EQ(ir_after(t.s, {t.A, t.B, t.C}, "schedule_ops"), ir(R"(
for (i, 0, 4) {
  for (j.init, 0, 8) {
    C[i, j.init] = 0f
  }
  for (k, 0, 16) {
    for (j, 0, 8) {
      C[i, j] = (C[i, j] + (A[i, k]*B[k, j]))
    }
  }
}
)"));
}

TEST(ReductionTest, OutermostReductionInitializesTheWholeOutput) {
  Matmul t(4, 8, 16);
  t.s[t.C].reorder({t.k, t.s[t.C].axis(0), t.s[t.C].axis(1)});
  EXPECT_EQ(ir_after(t.s, {t.A, t.B, t.C}, "schedule_ops"), ir(R"(
for (i.init, 0, 4) {
  for (j.init, 0, 8) {
    C[i.init, j.init] = 0f
  }
}
for (k, 0, 16) {
  for (i, 0, 4) {
    for (j, 0, 8) {
      C[i, j] = (C[i, j] + (A[i, k]*B[k, j]))
    }
  }
}
)"));
}

TEST(ReductionTest, NonDividingReductionSplitGuardsOnlyTheUpdate) {
  Tensor A = placeholder({4, 10}, DataType::f32(), "A");
  IterVar k = reduce_axis(10, "k");
  Tensor B = compute({4}, [&](Var i) { return sum(A(i, k), {k}); }, "B");
  Schedule s({B});
  s[B].split(k, 4);
  EXPECT_EQ(ir_after(s, {A, B}, "schedule_ops"), ir(R"(
for (i, 0, 4) {
  B[i] = 0f
  for (k.outer, 0, 3) {
    for (k.inner, 0, 4) {
      if ((((k.outer*4) + k.inner) < 10)) {
        B[i] = (B[i] + A[i, ((k.outer*4) + k.inner)])
      }
    }
  }
}
)"));
  EXPECT_EQ(lowered(s, {A, B}), ir(R"(
for (i, 0, 4) {
  B[i] = 0f
  for (k.outer, 0, 2) {
    for (k.inner, 0, 4) {
      B[i] = (B[i] + A[(((i*10) + (k.outer*4)) + k.inner)])
    }
  }
  for (k.inner, 0, 2) {
    B[i] = (B[i] + A[(((i*10) + k.inner) + 8)])
  }
}
)"));
}

TEST(ComputeInlineTest, ElementwiseProducerIsSubstituted) {
  Tensor A = placeholder({64}, DataType::f32(), "A");
  Tensor B = compute({64}, [&](Var i) { return A(i) + 1; }, "B");
  Tensor C = compute({64}, [&](Var i) { return B(i) * 2; }, "C");
  Schedule s({C});
  s[B].compute_inline();
  // No loop and no buffer for B are left.
  EXPECT_EQ(ir_after(s, {A, C}, "schedule_ops"), ir(R"(
for (i, 0, 64) {
  C[i] = ((A[i] + 1f)*2f)
}
)"));
}

TEST(ComputeRootTest, IntermediateGetsItsOwnNestAndBuffer) {
  Tensor A = placeholder({8}, DataType::f32(), "A");
  Tensor B = compute({8}, [&](Var i) { return A(i) + 1; }, "B");
  Tensor C = compute({8}, [&](Var i) { return B(i) * 2; }, "C");
  Schedule s({C});
  s[B].compute_inline();
  s[B].compute_root();  // undoes the inlining
  EXPECT_EQ(ir_after(s, {A, C}, "schedule_ops"), ir(R"(
allocate B[f32 * 8] {
  for (i, 0, 8) {
    B[i] = (A[i] + 1f)
  }
  for (i, 0, 8) {
    C[i] = (B[i]*2f)
  }
}
)"));
}

TEST(ComputeAtTest, RealizedBufferIsSizedByBoundInference) {
  // Each tile of 8 outputs of C reads 9 elements of B: B[8*io .. 8*io + 8].
  Tensor A = placeholder({65}, DataType::f32(), "A");
  Tensor B = compute({65}, [&](Var i) { return A(i) + 1; }, "B");
  Tensor C = compute({64}, [&](Var i) { return B(i) + B(i + 1); }, "C");
  Schedule s({C});
  auto [io, ii] = s[C].split(s[C].axis(0), 8);
  s[B].compute_at(s[C], io);
  EXPECT_EQ(ir_after(s, {A, C}, "schedule_ops"), ir(R"(
for (i.outer, 0, 8) {
  allocate B[f32 * 9] {
    for (i, 0, 9) {
      if ((((i.outer*8) + i) < 65)) {
        B[i] = (A[((i.outer*8) + i)] + 1f)
      }
    }
    for (i.inner, 0, 8) {
      C[((i.outer*8) + i.inner)] = (B[i.inner] + B[(i.inner + 1)])
    }
  }
}
)"));
  // The bound check is provably true here (8*7 + 8 < 65) and simplifies away.
  EXPECT_EQ(lowered(s, {A, C}), ir(R"(
for (i.outer, 0, 8) {
  allocate B[f32 * 9] {
    for (i, 0, 9) {
      B[i] = (A[((i.outer*8) + i)] + 1f)
    }
    for (i.inner, 0, 8) {
      C[((i.outer*8) + i.inner)] = (B[i.inner] + B[(i.inner + 1)])
    }
  }
}
)"));
}

TEST(ComputeAtTest, PartialTileOfTheConsumerIsPeeledForBothStages) {
  Tensor A = placeholder({100}, DataType::f32(), "A");
  Tensor B = compute({100}, [&](Var i) { return A(i) + 1; }, "B");
  Tensor C = compute({100}, [&](Var i) { return B(i) * 2; }, "C");
  Schedule s({C});
  auto [io, ii] = s[C].split(s[C].axis(0), 8);
  s[B].compute_at(s[C], io);
  EXPECT_EQ(lowered(s, {A, C}), ir(R"(
for (i.outer, 0, 12) {
  allocate B[f32 * 8] {
    for (i, 0, 8) {
      B[i] = (A[((i.outer*8) + i)] + 1f)
    }
    for (i.inner, 0, 8) {
      C[((i.outer*8) + i.inner)] = (B[i.inner]*2f)
    }
  }
}
allocate B[f32 * 8] {
  for (i, 0, 4) {
    B[i] = (A[(i + 96)] + 1f)
  }
  for (i.inner, 0, 4) {
    C[(i.inner + 96)] = (B[i.inner]*2f)
  }
}
)"));
}

TEST(ComputeAtTest, ProducerAttachedInsideAFusedLoop) {
  Tensor A = placeholder({8, 8}, DataType::f32(), "A");
  Tensor B = compute({8, 8}, [&](Var i, Var j) { return A(i, j) * 2; }, "B");
  Tensor C = compute({8, 8}, [&](Var i, Var j) { return B(i, j) + 1; }, "C");
  Schedule s({C});
  IterVar f = s[C].fuse(s[C].axis(0), s[C].axis(1));
  auto [fo, fi] = s[C].split(f, 16);
  s[B].compute_at(s[C], fo);
  // 16 consecutive elements of an 8-wide row-major tensor: two whole rows of B.
  EXPECT_EQ(lowered(s, {A, C}), ir(R"(
for (i.j.fused.outer, 0, 4) {
  allocate B[f32 * 16] {
    for (i, 0, 2) {
      for (j, 0, 8) {
        B[((i*8) + j)] = (A[(((i.j.fused.outer*16) + (i*8)) + j)]*2f)
      }
    }
    for (i.j.fused.inner, 0, 16) {
      C[((i.j.fused.outer*16) + i.j.fused.inner)] = (B[i.j.fused.inner] + 1f)
    }
  }
}
)"));
}

TEST(ComputeAtTest, NestedAttachments) {
  Tensor A = placeholder({8}, DataType::f32(), "A");
  Tensor B = compute({8}, [&](Var i) { return A(i) * 2; }, "B");
  Tensor C = compute({8}, [&](Var i) { return B(i) + 1; }, "C");
  Tensor D = compute({8}, [&](Var i) { return C(i) - 1; }, "D");
  Schedule s({D});
  auto [io, ii] = s[D].split(s[D].axis(0), 4);
  s[C].compute_at(s[D], io);
  s[B].compute_at(s[C], s[C].axis(0));
  EXPECT_EQ(lowered(s, {A, D}), ir(R"(
for (i.outer, 0, 2) {
  allocate C[f32 * 4] {
    for (i, 0, 4) {
      allocate B[f32 * 1] {
        B[0] = (A[((i.outer*4) + i)]*2f)
        C[i] = (B[0] + 1f)
      }
    }
    for (i.inner, 0, 4) {
      D[((i.outer*4) + i.inner)] = (C[i.inner] - 1f)
    }
  }
}
)"));
}

TEST(ComputeAtTest, ProducerAttachedOutsideItsConsumersAttachPoint) {
  // C is computed per 4 outputs of D, B once per 8 (a padded row band read by a register
  // tile): B's region is what C reads over both of its tiles, B[8*io .. 8*io + 8].
  Tensor A = placeholder({17}, DataType::f32(), "A");
  Tensor B = compute({17}, [&](Var i) { return A(i) + 1; }, "B");
  Tensor C = compute({16}, [&](Var i) { return B(i) + B(i + 1); }, "C");
  Tensor D = compute({16}, [&](Var i) { return C(i) * 2; }, "D");
  Schedule s({D});
  auto [io, ii] = s[D].split(s[D].axis(0), 8);
  auto [iio, iii] = s[D].split(ii, 4);
  s[C].compute_at(s[D], iio);
  s[B].compute_at(s[D], io);
  EXPECT_EQ(lowered(s, {A, D}), ir(R"(
for (i.outer, 0, 2) {
  allocate B[f32 * 9] {
    for (i, 0, 9) {
      B[i] = (A[((i.outer*8) + i)] + 1f)
    }
    for (i.inner.outer, 0, 2) {
      allocate C[f32 * 4] {
        for (i, 0, 4) {
          C[i] = (B[((i.inner.outer*4) + i)] + B[(((i.inner.outer*4) + i) + 1)])
        }
        for (i.inner.inner, 0, 4) {
          D[(((i.outer*8) + (i.inner.outer*4)) + i.inner.inner)] = (C[i.inner.inner]*2f)
        }
      }
    }
  }
}
)"));
}

TEST(CacheWriteTest, RegisterTileAccumulatesInALocalBuffer) {
  Matmul t(8, 8, 16);
  Tensor CL = t.s.cache_write(t.C);
  EXPECT_EQ(CL.name(), "C.local");
  auto [io, jo, ii, ji] = t.s[t.C].tile(t.s[t.C].axis(0), t.s[t.C].axis(1), 4, 4);
  t.s[CL].compute_at(t.s[t.C], jo);
  EXPECT_EQ(ir_after(t.s, {t.A, t.B, t.C}, "schedule_ops"), ir(R"(
for (i.outer, 0, 2) {
  for (j.outer, 0, 2) {
    allocate C.local[f32 * 4 * 4] local {
      for (i.c, 0, 4) {
        for (j.c, 0, 4) {
          if (((((i.outer*4) + i.c) < 8) && (((j.outer*4) + j.c) < 8))) {
            C.local[i.c, j.c] = 0f
          }
          for (k, 0, 16) {
            if (((((i.outer*4) + i.c) < 8) && (((j.outer*4) + j.c) < 8))) {
              C.local[i.c, j.c] = (C.local[i.c, j.c] + (A[((i.outer*4) + i.c), k]*B[k, ((j.outer*4) + j.c)]))
            }
          }
        }
      }
      for (i.inner, 0, 4) {
        for (j.inner, 0, 4) {
          C[((i.outer*4) + i.inner), ((j.outer*4) + j.inner)] = C.local[i.inner, j.inner]
        }
      }
    }
  }
}
)"));
  EXPECT_EQ(lowered(t.s, {t.A, t.B, t.C}), ir(R"(
for (i.outer, 0, 2) {
  for (j.outer, 0, 2) {
    allocate C.local[f32 * 16] local {
      for (i.c, 0, 4) {
        for (j.c, 0, 4) {
          C.local[((i.c*4) + j.c)] = 0f
          for (k, 0, 16) {
            C.local[((i.c*4) + j.c)] = (C.local[((i.c*4) + j.c)] + (A[(((i.outer*64) + (i.c*16)) + k)]*B[(((k*8) + (j.outer*4)) + j.c)]))
          }
        }
      }
      for (i.inner, 0, 4) {
        for (j.inner, 0, 4) {
          C[((((i.outer*32) + (i.inner*8)) + (j.outer*4)) + j.inner)] = C.local[((i.inner*4) + j.inner)]
        }
      }
    }
  }
}
)"));
}

TEST(CacheWriteTest, ReorderedVectorizedUnrolledRegisterTile) {
  // The classic CPU matmul micro-kernel: k outermost in the tile, the tile's rows
  // unrolled and its columns one vector each.
  Matmul t(8, 8, 4);
  Tensor CL = t.s.cache_write(t.C);
  auto [io, jo, ii, ji] = t.s[t.C].tile(t.s[t.C].axis(0), t.s[t.C].axis(1), 2, 4);
  t.s[CL].compute_at(t.s[t.C], jo);
  IterVar ci = t.s[CL].axis(0), cj = t.s[CL].axis(1), ck = t.s[CL].reduce_axis(0);
  t.s[CL].reorder({ck, ci, cj});
  t.s[CL].unroll(ci);
  t.s[CL].vectorize(cj);
  t.s[t.C].vectorize(ji);
  EXPECT_EQ(lowered(t.s, {t.A, t.B, t.C}), ir(R"(
for (i.outer, 0, 4) {
  for (j.outer, 0, 2) {
    allocate C.local[f32 * 8] local {
      C.local[ramp(0, 1, 4)] = x4(0f)
      C.local[ramp(4, 1, 4)] = x4(0f)
      for (k, 0, 4) {
        C.local[ramp(0, 1, 4)] = (C.local[ramp(0, 1, 4)] + (x4(A[((i.outer*8) + k)])*B[ramp(((k*8) + (j.outer*4)), 1, 4)]))
        C.local[ramp(4, 1, 4)] = (C.local[ramp(4, 1, 4)] + (x4(A[(((i.outer*8) + k) + 4)])*B[ramp(((k*8) + (j.outer*4)), 1, 4)]))
      }
      for (i.inner, 0, 2) {
        C[ramp((((i.outer*16) + (i.inner*8)) + (j.outer*4)), 1, 4)] = C.local[ramp((i.inner*4), 1, 4)]
      }
    }
  }
}
)"));
}

TEST(CacheReadTest, CopiesTheRegionEachTileReads) {
  Tensor A = placeholder({8, 8}, DataType::f32(), "A");
  Tensor B = compute({8, 8}, [&](Var i, Var j) { return A(i, j) * 2; }, "B");
  Schedule s({B});
  Tensor AL = s.cache_read(A, ir::MemScope::Local, {B});
  EXPECT_EQ(AL.name(), "A.local");
  auto [io, ii] = s[B].split(s[B].axis(0), 2);
  s[AL].compute_at(s[B], io);
  EXPECT_EQ(ir_after(s, {A, B}, "schedule_ops"), ir(R"(
for (i.outer, 0, 4) {
  allocate A.local[f32 * 2 * 8] local {
    for (A.ax0, 0, 2) {
      for (A.ax1, 0, 8) {
        if (((((i.outer*2) + A.ax0) < 8) && (A.ax1 < 8))) {
          A.local[A.ax0, A.ax1] = A[((i.outer*2) + A.ax0), A.ax1]
        }
      }
    }
    for (i.inner, 0, 2) {
      for (j, 0, 8) {
        B[((i.outer*2) + i.inner), j] = (A.local[i.inner, j]*2f)
      }
    }
  }
}
)"));
  EXPECT_EQ(lowered(s, {A, B}), ir(R"(
for (i.outer, 0, 4) {
  allocate A.local[f32 * 16] local {
    for (A.ax0, 0, 2) {
      for (A.ax1, 0, 8) {
        A.local[((A.ax0*8) + A.ax1)] = A[(((i.outer*16) + (A.ax0*8)) + A.ax1)]
      }
    }
    for (i.inner, 0, 2) {
      for (j, 0, 8) {
        B[(((i.outer*16) + (i.inner*8)) + j)] = (A.local[((i.inner*8) + j)]*2f)
      }
    }
  }
}
)"));
}

TEST(CacheReadTest, AttachedAtAnOuterReductionLoop) {
  Matmul t(8, 8, 16);
  Tensor AL = t.s.cache_read(t.A, ir::MemScope::Local, {t.C});
  auto [ko, ki] = t.s[t.C].split(t.k, 4);
  t.s[t.C].reorder({ko, t.s[t.C].axis(0), t.s[t.C].axis(1), ki});
  t.s[AL].compute_at(t.s[t.C], ko);
  // Per k.outer, the 8 x 4 panel of A that the inner loops read.
  EXPECT_EQ(lowered(t.s, {t.A, t.B, t.C}), ir(R"(
for (i.init, 0, 8) {
  for (j.init, 0, 8) {
    C[((i.init*8) + j.init)] = 0f
  }
}
for (k.outer, 0, 4) {
  allocate A.local[f32 * 32] local {
    for (A.ax0, 0, 8) {
      for (A.ax1, 0, 4) {
        A.local[((A.ax0*4) + A.ax1)] = A[(((A.ax0*16) + (k.outer*4)) + A.ax1)]
      }
    }
    for (i, 0, 8) {
      for (j, 0, 8) {
        for (k.inner, 0, 4) {
          C[((i*8) + j)] = (C[((i*8) + j)] + (A.local[((i*4) + k.inner)]*B[(((k.outer*32) + (k.inner*8)) + j)]))
        }
      }
    }
  }
}
)"));
}

TEST(AnnotationTest, ParallelIsKept) {
  AddOne2D t(4, 4);
  t.s[t.B].parallel(t.s[t.B].axis(0));
  EXPECT_EQ(lowered(t.s, {t.A, t.B}), ir(R"(
parallel (i, 0, 4) {
  for (j, 0, 4) {
    B[((i*4) + j)] = (A[((i*4) + j)] + 1f)
  }
}
)"));
}

TEST(AnnotationTest, ParallelSurvivesPartitioning) {
  Scale t(100);
  auto [io, ii] = t.s[t.B].split(t.s[t.B].axis(0), 8);
  t.s[t.B].parallel(io);
  EXPECT_EQ(lowered(t.s, {t.A, t.B}), ir(R"(
parallel (i.outer, 0, 12) {
  for (i.inner, 0, 8) {
    B[((i.outer*8) + i.inner)] = (A[((i.outer*8) + i.inner)]*2f)
  }
}
for (i.inner, 0, 4) {
  B[(i.inner + 96)] = (A[(i.inner + 96)]*2f)
}
)"));
}

TEST(AnnotationTest, PragmaIsKept) {
  AddOne2D t(4, 4);
  t.s[t.B].pragma(t.s[t.B].axis(0), "unroll_explicit", Expr(1));
  EXPECT_EQ(lowered(t.s, {t.A, t.B}), ir(R"(
for (i, 0, 4) pragma(unroll_explicit=1) {
  for (j, 0, 4) {
    B[((i*4) + j)] = (A[((i*4) + j)] + 1f)
  }
}
)"));
}

// Records what tensorize hands the intrinsic and emits one call with those numbers.
struct RecordingIntrin {
  te::TensorIntrin make(const std::string& name, std::vector<int64_t> extents) {
    te::TensorIntrin in;
    in.name = name;
    in.extents = std::move(extents);
    in.emit = [this, name](const te::TensorizeRegion& r) {
      regions.push_back(r);
      std::vector<Expr> args = r.output_base;
      for (const auto& [buf, base] : r.inputs) args.insert(args.end(), base.begin(), base.end());
      return ir::make_evaluate(ir::make_call(DataType::i32(), name, args));
    };
    return in;
  }
  std::vector<te::TensorizeRegion> regions;
};

TEST(TensorizeTest, ReductionTileBecomesOneCall) {
  Matmul t(8, 8, 16);
  auto [io, jo, ii, ji] = t.s[t.C].tile(t.s[t.C].axis(0), t.s[t.C].axis(1), 4, 4);
  auto [ko, ki] = t.s[t.C].split(t.k, 4);
  t.s[t.C].reorder({io, jo, ko, ii, ji, ki});
  RecordingIntrin rec;
  t.s[t.C].tensorize(ii, rec.make("gemm4x4x4", {4, 4, 4}));
  EXPECT_EQ(ir_after(t.s, {t.A, t.B, t.C}, "schedule_ops"), ir(R"(
for (i.outer, 0, 2) {
  for (j.outer, 0, 2) {
    for (i.inner.init, 0, 4) {
      for (j.inner.init, 0, 4) {
        C[((i.outer*4) + i.inner.init), ((j.outer*4) + j.inner.init)] = 0f
      }
    }
    for (k.outer, 0, 4) {
      gemm4x4x4((i.outer*4), (j.outer*4), (i.outer*4), (k.outer*4), (k.outer*4), (j.outer*4))
    }
  }
}
)"));
  ASSERT_EQ(rec.regions.size(), 1u);
  const te::TensorizeRegion& r = rec.regions[0];
  EXPECT_EQ(r.output, t.C.buffer());
  EXPECT_TRUE(r.reduction_update);
  EXPECT_EQ(r.extents, (std::vector<int64_t>{4, 4, 4}));
  ASSERT_EQ(r.inputs.size(), 2u);
  EXPECT_EQ(r.inputs[0].first, t.A.buffer());
  EXPECT_EQ(r.inputs[1].first, t.B.buffer());
  EXPECT_EQ(ir::to_string(r.inputs[1].second[0]), "(k.outer*4)");
  EXPECT_EQ(ir::to_string(r.inputs[1].second[1]), "(j.outer*4)");
}

TEST(TensorizeTest, ElementwiseRegion) {
  Tensor A = placeholder({8, 8}, DataType::f32(), "A");
  Tensor B = compute({8, 8}, [&](Var i, Var j) { return A(i, j) * 2; }, "B");
  Schedule s({B});
  auto [jo, ji] = s[B].split(s[B].axis(1), 4);
  RecordingIntrin rec;
  s[B].tensorize(ji, rec.make("scale4", {4}));
  EXPECT_EQ(lowered(s, {A, B}), ir(R"(
for (i, 0, 8) {
  for (j.outer, 0, 2) {
    scale4(i, (j.outer*4), i, (j.outer*4))
  }
}
)"));
  ASSERT_EQ(rec.regions.size(), 1u);
  EXPECT_FALSE(rec.regions[0].reduction_update);
  EXPECT_EQ(rec.regions[0].extents, (std::vector<int64_t>{4}));
}

}  // namespace
}  // namespace kiln::lower_test
