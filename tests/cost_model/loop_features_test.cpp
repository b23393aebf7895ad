// cost_model/loop_nest.h and ir_features.h on loop nests built by hand, where every
// expected number can be worked out on paper, plus the fixed length on real templates.
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "cost_model/affine.h"
#include "cost_model/ir_features.h"
#include "cost_model/loop_nest.h"
#include "compiler/base/error.h"
#include "compiler/ir/op.h"
#include "schedules/registry.h"
#include "tuner/builder.h"

namespace kiln::cost_model {
namespace {

using ir::Buffer;
using ir::DataType;
using ir::Expr;
using ir::ForKind;
using ir::Stmt;
using ir::Var;

// A 4x8x16 f32 matmul, C[i, j] = sum_k A[i, k] * B[k, j], with i parallel:
//   parallel (i, 0, 4)
//     for (j, 0, 8)
//       C[i*8 + j] = 0
//       for (k, 0, 16)
//         C[i*8 + j] = C[i*8 + j] + A[i*16 + k] * B[k*8 + j]
struct TinyMatmul {
  Buffer a = ir::make_buffer("A", DataType::f32(), {64});
  Buffer b = ir::make_buffer("B", DataType::f32(), {128});
  Buffer c = ir::make_buffer("C", DataType::f32(), {32});
  Var i{"i"}, j{"j"}, k{"k"};

  ir::LoweredFunc func() const {
    Expr c_index = i * 8 + j;
    Expr update = ir::make_load(c, {c_index}) +
                  ir::make_load(a, {i * 16 + k}) * ir::make_load(b, {k * 8 + j});
    Stmt reduce = ir::make_for(k, 0, 16, ForKind::Serial, ir::make_store(c, update, {c_index}));
    Stmt init = ir::make_store(c, ir::make_float(DataType::f32(), 0), {c_index});
    Stmt body = ir::make_for(i, 0, 4, ForKind::Parallel,
                             ir::make_for(j, 0, 8, ForKind::Serial, ir::make_seq({init, reduce})));
    return {"matmul", {a, b, c}, body};
  }
};

double feature(const std::vector<float>& f, const std::string& name) {
  const auto& names = ir_feature_names();
  auto it = std::find(names.begin(), names.end(), name);
  EXPECT_NE(it, names.end()) << "no feature named " << name;
  return it == names.end() ? NAN : f[it - names.begin()];
}

TEST(LoopNest, TinyMatmulLevelsAndTotals) {
  LoopNestSummary s = summarize_loop_nest(TinyMatmul().func());
  ASSERT_EQ(s.levels.size(), 3u);
  EXPECT_EQ(s.levels[0].var, "i");
  EXPECT_EQ(s.levels[0].extent, 4);
  EXPECT_EQ(s.levels[0].kind, ForKind::Parallel);
  EXPECT_EQ(s.levels[1].var, "j");
  EXPECT_EQ(s.levels[1].extent, 8);
  EXPECT_EQ(s.levels[1].kind, ForKind::Serial);
  EXPECT_EQ(s.levels[1].body_stores, 1);  // the init; the update sits in the k loop
  EXPECT_EQ(s.levels[2].var, "k");
  EXPECT_EQ(s.levels[2].extent, 16);
  EXPECT_DOUBLE_EQ(s.levels[2].trips, 4 * 8 * 16);

  // One multiply and one add per (i, j, k).
  EXPECT_DOUBLE_EQ(s.totals.flops, 2.0 * 4 * 8 * 16);
  // Per (i, j, k): loads of C, A, B and a store of C; plus one init store per (i, j).
  EXPECT_DOUBLE_EQ(s.totals.bytes_loaded, 3.0 * 4 * 512);
  EXPECT_DOUBLE_EQ(s.totals.bytes_stored, 4.0 * (512 + 32));
  EXPECT_DOUBLE_EQ(s.totals.arithmetic_intensity, 1024.0 / (4 * (3 * 512 + 544)));
  EXPECT_DOUBLE_EQ(s.totals.parallel_extent, 4);
  EXPECT_EQ(s.totals.vector_width, 1);
  EXPECT_DOUBLE_EQ(s.totals.vector_ops, 0);

  ASSERT_EQ(s.buffers.size(), 3u);
  EXPECT_TRUE(s.buffers[2].written);
  EXPECT_FALSE(s.buffers[0].written);
}

TEST(LoopNest, TinyMatmulStridesFootprintAndReuse) {
  LoopNestSummary s = summarize_loop_nest(TinyMatmul().func());
  const int A = 0, B = 1, C = 2;
  // The k loop: A walks a row (stride 1), B a column (stride 8), C stays put.
  const LoopLevel& k = s.levels[2];
  EXPECT_DOUBLE_EQ(k.buffers[A].loop_stride, 1);
  EXPECT_DOUBLE_EQ(k.buffers[B].loop_stride, 8);
  EXPECT_DOUBLE_EQ(k.buffers[C].loop_stride, 0);
  EXPECT_DOUBLE_EQ(k.buffers[B].innermost_stride, 8);
  EXPECT_DOUBLE_EQ(k.buffers[A].accesses, 16);
  EXPECT_DOUBLE_EQ(k.buffers[C].accesses, 32);  // a load and a store per k
  EXPECT_DOUBLE_EQ(k.buffers[A].touched_bytes, 16 * 4);
  EXPECT_DOUBLE_EQ(k.buffers[B].touched_bytes, 16 * 4);
  EXPECT_DOUBLE_EQ(k.buffers[C].touched_bytes, 4);
  EXPECT_DOUBLE_EQ(k.buffers[C].reuse, 32);
  EXPECT_DOUBLE_EQ(k.buffers[A].reuse, 1);

  // The j loop: one row of A reused by every j, B and C move by one element per j.
  const LoopLevel& j = s.levels[1];
  EXPECT_DOUBLE_EQ(j.buffers[A].loop_stride, 0);
  EXPECT_DOUBLE_EQ(j.buffers[B].loop_stride, 1);
  EXPECT_DOUBLE_EQ(j.buffers[C].loop_stride, 1);
  EXPECT_DOUBLE_EQ(j.buffers[A].touched_bytes, 16 * 4);
  EXPECT_DOUBLE_EQ(j.buffers[A].reuse, 8);
  EXPECT_DOUBLE_EQ(j.buffers[B].touched_bytes, 128 * 4);
  EXPECT_DOUBLE_EQ(j.buffers[C].accesses, 8 * 33);

  // The whole kernel touches each buffer once over.
  const LoopLevel& i = s.levels[0];
  EXPECT_DOUBLE_EQ(i.buffers[A].touched_bytes, 64 * 4);
  EXPECT_DOUBLE_EQ(i.buffers[B].touched_bytes, 128 * 4);
  EXPECT_DOUBLE_EQ(i.buffers[C].touched_bytes, 32 * 4);
  EXPECT_DOUBLE_EQ(i.buffers[B].reuse, 4);
}

TEST(IrFeatures, TinyMatmulEntries) {
  std::vector<float> f = ir_features(TinyMatmul().func());
  ASSERT_EQ(f.size(), ir_feature_count());
  EXPECT_EQ(feature(f, "L0.present"), 1);
  EXPECT_EQ(feature(f, "L0.extent"), std::log2(5.0f));
  EXPECT_EQ(feature(f, "L0.parallel"), 1);
  EXPECT_EQ(feature(f, "L0.serial"), 0);
  EXPECT_EQ(feature(f, "L1.serial"), 1);
  EXPECT_EQ(feature(f, "L2.extent"), std::log2(17.0f));
  EXPECT_EQ(feature(f, "L3.present"), 0);
  EXPECT_EQ(feature(f, "L3.extent"), 0);
  EXPECT_FLOAT_EQ(feature(f, "kernel.flops"), std::log2(1025.0f));
  EXPECT_EQ(feature(f, "kernel.chain_depth"), 3);
  // Slots: the output first, then the inputs in call order; no local buffers.
  EXPECT_EQ(feature(f, "B0.written"), 1);
  EXPECT_EQ(feature(f, "B0.element_bytes"), 4);
  EXPECT_EQ(feature(f, "B1.written"), 0);
  EXPECT_EQ(feature(f, "B3.present"), 0);
  EXPECT_EQ(feature(f, "B4.present"), 0);
  // C (slot 0), A (slot 1), B (slot 2) along k: strides 0, 1, 8 as log2(1 + |s|).
  EXPECT_EQ(feature(f, "L2.B0.loop_stride"), 0);
  EXPECT_EQ(feature(f, "L2.B1.loop_stride"), 1);
  EXPECT_FLOAT_EQ(feature(f, "L2.B2.loop_stride"), std::log2(9.0f));
  EXPECT_FLOAT_EQ(feature(f, "L2.B1.touched_bytes"), std::log2(65.0f));
  EXPECT_FLOAT_EQ(feature(f, "L2.B0.reuse"), std::log2(33.0f));
}

// The same matmul with j as 8 vector lanes:
//   C[ramp(i*8, 1, 8)] += x8(A[i*16 + k]) * B[ramp(k*8, 1, 8)]
TEST(LoopNest, VectorLanesCountInFlopsAndStrides) {
  TinyMatmul m;
  Expr c_index = ir::make_ramp(m.i * 8, 1, 8);
  Expr update =
      ir::make_load(m.c, {c_index}) + ir::make_broadcast(ir::make_load(m.a, {m.i * 16 + m.k}), 8) *
                                          ir::make_load(m.b, {ir::make_ramp(m.k * 8, 1, 8)});
  Stmt body = ir::make_for(
      m.i, 0, 4, ForKind::Parallel,
      ir::make_for(m.k, 0, 16, ForKind::Serial, ir::make_store(m.c, update, {c_index})));
  LoopNestSummary s = summarize_loop_nest({"vmatmul", {m.a, m.b, m.c}, body});
  EXPECT_DOUBLE_EQ(s.totals.flops, 2.0 * 4 * 8 * 16);
  EXPECT_EQ(s.totals.vector_width, 8);
  // Per (i, k): vector load of C and B, a vector add and multiply, a vector store (the
  // broadcast's scalar load of A is not a vector operation).
  EXPECT_DOUBLE_EQ(s.totals.vector_ops, 5.0 * 64);
  ASSERT_EQ(s.levels.size(), 2u);
  const LoopLevel& k = s.levels[1];
  EXPECT_DOUBLE_EQ(k.buffers[1].innermost_stride, 1);  // B: contiguous lanes
  EXPECT_DOUBLE_EQ(k.buffers[1].loop_stride, 8);
  EXPECT_DOUBLE_EQ(k.buffers[0].innermost_stride, 1);   // A: a scalar walking along k
  EXPECT_DOUBLE_EQ(k.buffers[2].touched_bytes, 8 * 4);  // C: one vector
  EXPECT_DOUBLE_EQ(k.buffers[1].touched_bytes, 128 * 4);
}

TEST(LoopNest, ForKindsAreRecorded) {
  Buffer out = ir::make_buffer("out", DataType::f32(), {64});
  Var a("a"), b("b"), c("c");
  Stmt store = ir::make_store(out, ir::make_float(DataType::f32(), 1), {a * 16 + b * 4 + c});
  Stmt body = ir::make_for(
      a, 0, 4, ForKind::Serial,
      ir::make_for(b, 0, 4, ForKind::Unrolled, ir::make_for(c, 0, 4, ForKind::Vectorized, store)));
  std::vector<float> f = ir_features(ir::LoweredFunc{"kinds", {out}, body});
  EXPECT_EQ(feature(f, "L0.serial"), 1);
  EXPECT_EQ(feature(f, "L1.unrolled"), 1);
  EXPECT_EQ(feature(f, "L1.serial"), 0);
  EXPECT_EQ(feature(f, "L2.vectorized"), 1);
  EXPECT_EQ(feature(f, "L2.parallel"), 0);
}

TEST(LoopNest, ChainFollowsTheHeaviestLoop) {
  // A short init loop beside a long update loop: the chain goes into the update.
  Buffer out = ir::make_buffer("out", DataType::f32(), {16});
  Var i("i"), init("init"), r("r");
  Stmt init_loop = ir::make_for(init, 0, 16, ForKind::Serial,
                                ir::make_store(out, ir::make_float(DataType::f32(), 0), {init}));
  Expr sum = ir::make_load(out, {i}) + ir::make_float(DataType::f32(), 1);
  Stmt update =
      ir::make_for(i, 0, 16, ForKind::Serial,
                   ir::make_for(r, 0, 100, ForKind::Serial, ir::make_store(out, sum, {i})));
  LoopNestSummary s = summarize_loop_nest({"two", {out}, ir::make_seq({init_loop, update})});
  ASSERT_EQ(s.levels.size(), 2u);
  EXPECT_EQ(s.levels[0].var, "i");
  EXPECT_EQ(s.levels[1].var, "r");
  EXPECT_DOUBLE_EQ(s.totals.flops, 1600);  // the init loop adds nothing
}

TEST(LoopNest, LetsAreSeenThroughAndDivisionIsNotAffine) {
  Buffer in = ir::make_buffer("in", DataType::f32(), {256});
  Buffer out = ir::make_buffer("out", DataType::f32(), {256});
  Var i("i"), k("k"), row("row");
  // let row = i*16 in out[row + k] = in[row + k/2]
  Stmt store = ir::make_store(out, ir::make_load(in, {row + ir::floordiv(k, 2)}), {row + k});
  Stmt body =
      ir::make_for(i, 0, 16, ForKind::Serial,
                   ir::make_let_stmt(row, i * 16, ir::make_for(k, 0, 16, ForKind::Serial, store)));
  LoopNestSummary s = summarize_loop_nest({"let", {in, out}, body});
  ASSERT_EQ(s.levels.size(), 2u);
  EXPECT_DOUBLE_EQ(s.levels[0].buffers[1].loop_stride, 16);  // out along i, through the let
  EXPECT_DOUBLE_EQ(s.levels[1].buffers[1].loop_stride, 1);
  EXPECT_TRUE(std::isnan(s.levels[1].buffers[0].loop_stride));    // in[row + k/2] along k
  EXPECT_DOUBLE_EQ(s.levels[1].buffers[0].touched_bytes, 8 * 4);  // k/2 covers 8 elements
  std::vector<float> f = ir_features({"let", {in, out}, body});
  EXPECT_EQ(feature(f, "L1.B1.loop_stride"), -1);  // `in` is slot 1 (read only)
}

TEST(LoopNest, UnrolledCopiesShareOneFootprint) {
  // Four unrolled copies acc[0..3] inside a loop: 4 elements touched, not 4 x 1 disjoint
  // guesses, and body_stores shows the unrolling.
  Buffer acc = ir::make_buffer("acc", DataType::f32(), {4}, ir::MemScope::Local);
  Buffer out = ir::make_buffer("out", DataType::f32(), {4});
  Var r("r"), w("w");
  std::vector<Stmt> copies;
  for (int c = 0; c < 4; ++c)
    copies.push_back(ir::make_store(
        acc, ir::make_load(acc, {Expr(c)}) + ir::make_float(DataType::f32(), 1), {Expr(c)}));
  Stmt write =
      ir::make_for(w, 0, 4, ForKind::Serial, ir::make_store(out, ir::make_load(acc, {w}), {w}));
  Stmt body = ir::make_allocate(
      acc, ir::make_seq({ir::make_for(r, 0, 32, ForKind::Serial, ir::make_seq(copies)), write}));
  LoopNestSummary s = summarize_loop_nest({"unrolled", {out}, body});
  ASSERT_EQ(s.levels.size(), 1u);
  EXPECT_EQ(s.levels[0].body_stores, 4);
  EXPECT_DOUBLE_EQ(s.levels[0].buffers[1].touched_bytes, 16);
  EXPECT_DOUBLE_EQ(s.levels[0].buffers[1].reuse, 2.0 * 128 * 4 / 16);
  EXPECT_DOUBLE_EQ(s.totals.local_bytes, 16);
  // The output takes slot 0, the allocated tile the first local slot.
  std::vector<float> f = ir_features({"unrolled", {out}, body});
  EXPECT_EQ(feature(f, "B0.written"), 1);
  EXPECT_EQ(feature(f, "B1.present"), 0);
  EXPECT_EQ(feature(f, "B4.present"), 1);
  EXPECT_EQ(feature(f, "L0.B4.loop_stride"), 0);
}

TEST(IrFeatures, DeepChainKeepsTheInnermostLevels) {
  Buffer out = ir::make_buffer("out", DataType::f32(), {1 << 10});
  std::vector<Var> vars;
  Expr index = 0;
  for (int d = 0; d < 10; ++d) {
    std::string name = std::to_string(d);
    name.insert(name.begin(), 'v');
    vars.emplace_back(name);
    index = index * 2 + vars.back();
  }
  Stmt s = ir::make_store(out, ir::make_float(DataType::f32(), 1), {index});
  for (int d = 9; d >= 0; --d) s = ir::make_for(vars[d], 0, 2, ForKind::Serial, s);
  std::vector<float> f = ir_features({"deep", {out}, s});
  ASSERT_EQ(f.size(), ir_feature_count());
  EXPECT_EQ(feature(f, "kernel.chain_depth"), 10);
  EXPECT_EQ(feature(f, "L7.present"), 1);
  EXPECT_EQ(feature(f, "L7.B0.loop_stride"), 1);  // v9, the innermost, moves by 1
  EXPECT_EQ(feature(f, "L0.B0.loop_stride"), std::log2(1.0f + 128));  // v2 moves by 2^7
}

TEST(IrFeatures, NamesAreUniqueAndMatchTheCount) {
  const auto& names = ir_feature_names();
  EXPECT_EQ(names.size(), ir_feature_count());
  EXPECT_EQ(names.size(),
            static_cast<size_t>(kMaxLevels * (8 + kBufferSlots * 5) + kBufferSlots * 3 + 10));
  std::set<std::string> unique(names.begin(), names.end());
  EXPECT_EQ(unique.size(), names.size());
}

TEST(IrFeatures, NeedsFlatIndices) {
  Buffer out = ir::make_buffer("out", DataType::f32(), {4, 4});
  Stmt s = ir::make_store(out, ir::make_float(DataType::f32(), 1), {Expr(0), Expr(1)});
  EXPECT_THROW(ir_features(ir::LoweredFunc{"unflattened", {out}, s}), UserError);
}

TEST(Affine, Coefficients) {
  Var i("i"), j("j");
  EXPECT_EQ(linear_coefficient(i * 768 + j * 2 + 3, i.node()), 768);
  EXPECT_EQ(linear_coefficient(i * 768 + j * 2 + 3, j.node()), 2);
  EXPECT_EQ(linear_coefficient((i - j) * 4, j.node()), -4);
  EXPECT_EQ(linear_coefficient(ir::make_ramp(j * 16, 1, 16), j.node()), 16);
  EXPECT_EQ(linear_coefficient(Expr(7), i.node()), 0);
  EXPECT_EQ(linear_coefficient(ir::floordiv(i, 4) + j, j.node()), 1);  // i/4 does not use j
  EXPECT_FALSE(linear_coefficient(ir::floordiv(i, 4), i.node()).has_value());
  EXPECT_FALSE(linear_coefficient(i * j, i.node()).has_value());
}

// Every template the registry offers for a few real workloads lowers to features of the
// one fixed length, with finite values.
TEST(IrFeatures, FixedLengthAcrossRealKernels) {
  Target target = target_from_name("x86-avx512");
  std::vector<schedules::Workload> workloads = {
      {"dense", {{"M", 32}, {"N", 64}, {"K", 48}}, DataType::f32(), {"bias", "relu"}},
      {"conv2d",
       {{"N", 1}, {"C", 16}, {"H", 14}, {"W", 14}, {"O", 32}, {"KH", 3}, {"KW", 3}, {"pad", 1}},
       DataType::f32(),
       {}},
      {"softmax", {{"M", 8}, {"N", 100}}, DataType::f32(), {}},
  };
  int kernels = 0;
  for (const auto& w : workloads) {
    for (const schedules::OpTemplate* tpl : schedules::templates_for(w, target)) {
      ir::LoweredFunc f = tuner::lower_template(*tpl, w, target, tpl->fallback(w, target), "k").func;
      std::vector<float> v = ir_features(f);
      ASSERT_EQ(v.size(), ir_feature_count()) << tpl->name();
      for (size_t i = 0; i < v.size(); ++i)
        EXPECT_TRUE(std::isfinite(v[i])) << tpl->name() << " " << ir_feature_names()[i];
      ++kernels;
    }
  }
  EXPECT_GE(kernels, 3);
}

// The IR features tell apart configs that differ only in a loop-shaping knob (K block,
// row tiles per block, which loop is parallel, conv loop order): the model can learn them.
TEST(IrFeatures, SeeTheLoopShapingKnobs) {
  Target target = target_from_name("x86-avx512");
  auto features_with = [&](const schedules::Workload& w, const std::string& tpl_name,
                           const std::map<std::string, int64_t>& knobs) {
    const schedules::OpTemplate& tpl = schedules::template_named(tpl_name);
    schedules::Config c = tpl.fallback(w, target);
    for (const auto& [k, v] : knobs) c.set(k, v);
    return ir_features(tuner::lower_template(tpl, w, target, c, "k").func);
  };
  schedules::Workload dense{"dense", {{"M", 64}, {"N", 128}, {"K", 256}}, DataType::f32(), {}};
  const std::vector<float> base = features_with(dense, "dense.packed", {});
  EXPECT_NE(base, features_with(dense, "dense.packed", {{"kc", 64}}));
  EXPECT_NE(base, features_with(dense, "dense.packed", {{"mc_tiles", 4}}));
  EXPECT_NE(base, features_with(dense, "dense.packed", {{"parallel", 2}}));
  schedules::Workload conv{
      "conv2d",
      {{"N", 1}, {"C", 16}, {"H", 14}, {"W", 14}, {"O", 32}, {"KH", 3}, {"KW", 3}, {"pad", 1}},
      DataType::f32(),
      {}};
  // Two input-channel blocks, so the reduction order has blocks to move.
  const std::vector<float> conv_base = features_with(conv, "conv2d.nchwc", {{"ic_bn", 8}});
  EXPECT_NE(conv_base, features_with(conv, "conv2d.nchwc", {{"ic_bn", 8}, {"reduce_order", 1}}));
  EXPECT_NE(conv_base, features_with(conv, "conv2d.nchwc", {{"ic_bn", 8}, {"oc_inner", 2}}));
}

}  // namespace
}  // namespace kiln::cost_model
