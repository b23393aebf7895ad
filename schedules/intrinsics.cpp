#include "schedules/intrinsics.h"

#include "compiler/base/error.h"
#include "compiler/ir/op.h"

namespace kiln::schedules {

using ir::DataType;
using ir::Expr;
using ir::Stmt;
using ir::Var;

namespace {

std::string types_of(const Expr& acc, const Expr& a, const Expr& b) {
  return "(" + acc.type().str() + ", " + a.type().str() + ", " + b.type().str() + ")";
}

// The steps of a reduction loop of `count` steps: whole blocks of `unroll` steps in a loop
// "<stem>.outer" (each block written out, so the steps' loads and instructions interleave),
// then the remainder as `remainder` says.
std::vector<Stmt> reduction_steps(const std::string& stem, int64_t count, int64_t unroll,
                                  RemainderKind remainder,
                                  const std::function<Stmt(const Expr&)>& step) {
  const int64_t blocks = count / unroll, rest = count % unroll;
  std::vector<Stmt> seq;
  if (blocks > 0) {
    Var ko(stem + ".outer");
    std::vector<Stmt> unrolled;
    for (int64_t u = 0; u < unroll; ++u) unrolled.push_back(step(ko * unroll + Expr(u)));
    seq.push_back(ir::make_for(ko, 0, blocks, ir::ForKind::Serial, ir::make_seq(unrolled)));
  }
  if (rest > 0 && remainder == RemainderKind::Loop) {
    Var kr(stem + ".rest");
    seq.push_back(ir::make_for(kr, 0, rest, ir::ForKind::Serial, step(Expr(blocks * unroll) + kr)));
  } else {
    for (int64_t u = 0; u < rest; ++u) seq.push_back(step(Expr(blocks * unroll + u)));
  }
  return seq;
}

}  // namespace

Expr reinterpret(DataType t, Expr v) {
  return ir::make_call(t, "reinterpret", {std::move(v)}, ir::CallKind::Reinterpret);
}

Expr pair_dot_bf16(Expr acc, Expr a, Expr b) {
  const DataType t = acc.type();
  user_check(t.element() == DataType::f32() && a.type() == DataType::bf16(2 * t.lanes) &&
             b.type() == a.type())
      << kPairDotBf16 << " takes (f32 x L, bf16 x 2L, bf16 x 2L), got " << types_of(acc, a, b);
  return ir::make_call(t, kPairDotBf16, {std::move(acc), std::move(a), std::move(b)},
                       ir::CallKind::TensorIntrinsic);
}

Expr mmla_bf16(Expr acc, Expr a, Expr b) {
  user_check(acc.type() == DataType::f32(4) && a.type() == DataType::bf16(8) &&
             b.type() == DataType::bf16(8))
      << kMmlaBf16 << " takes (f32x4, bf16x8, bf16x8), got " << types_of(acc, a, b);
  return ir::make_call(DataType::f32(4), kMmlaBf16, {std::move(acc), std::move(a), std::move(b)},
                       ir::CallKind::TensorIntrinsic);
}

Expr pair_dot_i16(Expr acc, Expr a, Expr b, const Target& t) {
  const DataType at = acc.type();
  const int lanes = at.lanes;
  user_check(at.element() == DataType::i32() && a.type() == DataType::i16(2 * lanes) &&
             b.type() == a.type())
      << kPairDotI16 << " takes (i32 x L, i16 x 2L, i16 x 2L), got " << types_of(acc, a, b);
  if (t.is_x86()) {
    if (lanes == 16 && t.has("avx512vnni")) {  // vpdpwssd: the multiply and the add in one
      // LLVM 19 declares its operands as i32 vectors.
      const DataType words = DataType::i32(16);
      return ir::make_call(at, "llvm.x86.avx512.vpdpwssd.512",
                           {std::move(acc), reinterpret(words, std::move(a)),
                            reinterpret(words, std::move(b))},
                           ir::CallKind::LLVMIntrinsic);
    }
    const char* pmaddwd = lanes == 8 && t.has("avx2")        ? "llvm.x86.avx2.pmadd.wd"
                          : lanes == 16 && t.has("avx512bw") ? "llvm.x86.avx512.pmaddw.d.512"
                                                             : nullptr;
    if (pmaddwd)
      return acc + ir::make_call(at, pmaddwd, {std::move(a), std::move(b)},
                                 ir::CallKind::LLVMIntrinsic);
  }
  // Even and odd lanes widened and multiplied: LLVM selects the widening multiply-adds.
  std::vector<int> even, odd;
  for (int l = 0; l < lanes; ++l) even.push_back(2 * l), odd.push_back(2 * l + 1);
  auto half = [&](const Expr& v, const std::vector<int>& pick) {
    return ir::make_cast(at, ir::make_shuffle(v, v, pick));
  };
  return acc + half(a, even) * half(b, even) + half(a, odd) * half(b, odd);
}

Expr quad_dot_i8(Expr acc, Expr a, Expr b, const Target& t) {
  const DataType at = acc.type();
  const int lanes = at.lanes;
  const DataType data = quad_dot_data_type(t);
  user_check(at.element() == DataType::i32() && a.type() == data.with_lanes(4 * lanes) &&
             b.type() == DataType::i8(4 * lanes))
      << kQuadDotI8 << " takes (i32 x L, " << data.str() << " x 4L, i8 x 4L), got "
      << types_of(acc, a, b);
  user_check(lanes == quad_dot_lanes(t))
      << kQuadDotI8 << ": " << t.name << " takes " << quad_dot_lanes(t) << " lanes, got "
      << lanes;
  if (t.is_x86()) {
    // LLVM 19 declares vpdpbusd's operands as i32 vectors; the 256-bit form selects the
    // VEX encoding on AVX-VNNI CPUs.
    const DataType words = DataType::i32(lanes);
    return ir::make_call(at, lanes == 16 ? "llvm.x86.avx512.vpdpbusd.512"
                                         : "llvm.x86.avx512.vpdpbusd.256",
                         {std::move(acc), reinterpret(words, std::move(a)),
                          reinterpret(words, std::move(b))},
                         ir::CallKind::LLVMIntrinsic);
  }
  // With i8mm, `usdot` multiplies u8 data by s8 weights as vpdpbusd does; else `sdot`, s8 by s8.
  if (data == DataType::u8())
    return ir::make_call(
        at, "llvm.aarch64.neon.usdot.v4i32.v16i8",
        {std::move(acc), reinterpret(DataType::i8(4 * lanes), std::move(a)), std::move(b)},
        ir::CallKind::LLVMIntrinsic);
  return ir::make_call(at, "llvm.aarch64.neon.sdot.v4i32.v16i8",
                       {std::move(acc), std::move(a), std::move(b)}, ir::CallKind::LLVMIntrinsic);
}

int64_t quad_dot_lanes(const Target& t) {
  if (t.is_x86()) {
    if (t.has("avx512vnni") && t.has("avx512bw")) return 16;
    if (t.has("avxvnni")) return 8;
    return 0;
  }
  return t.is_aarch64() && t.has("dotprod") ? 4 : 0;
}

DataType quad_dot_data_type(const Target& t) {
  return t.is_x86() || t.has("i8mm") ? DataType::u8() : DataType::i8();
}

int64_t pair_dot_i16_lanes(const Target& t) {
  if (t.is_x86()) return t.has("avx512bw") ? 16 : 8;
  return 4;
}

te::TensorIntrin pair_dot_bf16_tile(
    const PairDotTile& tile, std::function<PairDotOperands(const te::TensorizeRegion&)> bind) {
  PairDotFn dot = [](Expr acc, Expr a, Expr b) {
    return pair_dot_bf16(std::move(acc), std::move(a), std::move(b));
  };
  return pair_dot_tile(tile, DataType::bf16(), std::move(dot), std::move(bind));
}

te::TensorIntrin pair_dot_tile(const PairDotTile& tile, DataType pair, PairDotFn dot,
                               std::function<PairDotOperands(const te::TensorizeRegion&)> bind) {
  internal_check(tile.unroll > 0 && tile.pairs >= (tile.odd_tail ? 1 : 0))
      << "pair_dot_tile: bad tile";
  te::TensorIntrin in;
  in.name = "pair_dot_" + pair.str() + "_tile";
  const int per_word = 32 / pair.bits;
  internal_check(per_word * pair.bits == 32 && (!tile.odd_tail || per_word == 2))
      << "pair_dot_tile: groups of " << pair.str() << " do not fill a 32-bit word";
  in.extents = {tile.pairs, per_word, tile.rows, tile.vecs, tile.lanes};
  in.emit = [tile, pair, per_word, dot = std::move(dot),
             bind = std::move(bind)](const te::TensorizeRegion& r) -> Stmt {
    const PairDotOperands ops = bind(r);
    const int lanes = static_cast<int>(tile.lanes);
    const DataType pairs_t = pair.with_lanes(per_word * lanes);

    // One pair of every row (or, `last`, each row's single last value with a zero partner).
    auto step = [&](const Expr& k2, bool last) {
      std::vector<Expr> b;
      for (int64_t v = 0; v < tile.vecs; ++v) b.push_back(ops.b_vector(k2, v));
      std::vector<Stmt> body;
      for (int64_t i = 0; i < tile.rows; ++i) {
        Expr two = last ? ops.a_last(i) : ops.a_pair(k2, i);
        Expr broadcast = reinterpret(pairs_t, ir::make_broadcast(two, lanes));
        for (int64_t v = 0; v < tile.vecs; ++v) {
          std::vector<Expr> idx = ops.out_index(i, v);
          Expr sum = dot(ir::make_load(ops.out, idx), broadcast, b[v]);
          body.push_back(ir::make_store(ops.out, sum, idx));
        }
      }
      return ir::make_seq(body);
    };

    const int64_t whole = tile.pairs - (tile.odd_tail ? 1 : 0);
    std::vector<Stmt> seq = reduction_steps(tile.loop, whole, tile.unroll, tile.remainder,
                                            [&](const Expr& k2) { return step(k2, false); });
    if (tile.odd_tail) seq.push_back(step(Expr(whole), true));
    return ir::make_seq(seq);
  };
  return in;
}

te::TensorIntrin mmla_bf16_tile(const MmlaTile& tile,
                                std::function<MmlaOperands(const te::TensorizeRegion&)> bind) {
  internal_check(tile.unroll > 0) << "mmla_bf16_tile: bad tile";
  te::TensorIntrin in;
  in.name = "mmla_bf16_tile";
  in.extents = {tile.blocks, 4, 2 * tile.row_pairs, tile.col_pairs, 2};
  in.emit = [tile, bind = std::move(bind)](const te::TensorizeRegion& r) -> Stmt {
    const MmlaOperands ops = bind(r);
    const int64_t mr2 = tile.row_pairs, nr2 = tile.col_pairs;
    const DataType f32x4 = DataType::f32(4);
    ir::Buffer t =
        ir::make_buffer("bfmmla.tile", DataType::f32(), {mr2 * nr2 * 4}, ir::MemScope::Local);
    auto tile_at = [&](int64_t p, int64_t q) {
      return ir::make_ramp(Expr((p * nr2 + q) * 4), 1, 4);
    };

    auto step = [&](const Expr& kq) {
      std::vector<Expr> a, b;
      for (int64_t p = 0; p < mr2; ++p) a.push_back(ops.a_block(kq, p));
      for (int64_t q = 0; q < nr2; ++q) b.push_back(ops.b_block(kq, q));
      std::vector<Stmt> body;
      for (int64_t p = 0; p < mr2; ++p)
        for (int64_t q = 0; q < nr2; ++q) {
          Expr mm = mmla_bf16(ir::make_load(t, {tile_at(p, q)}), a[p], b[q]);
          body.push_back(ir::make_store(t, mm, {tile_at(p, q)}));
        }
      return ir::make_seq(body);
    };

    std::vector<Stmt> seq;
    for (int64_t p = 0; p < mr2; ++p)
      for (int64_t q = 0; q < nr2; ++q)
        seq.push_back(ir::make_store(t, ir::make_zero(f32x4), {tile_at(p, q)}));
    std::vector<Stmt> loop =
        reduction_steps(tile.loop, tile.blocks, tile.unroll, RemainderKind::Unrolled, step);
    seq.insert(seq.end(), loop.begin(), loop.end());
    // A 2x2 tile is [r0c0 r0c1 r1c0 r1c1]: each half is two adjacent columns of one row.
    for (int64_t p = 0; p < mr2; ++p)
      for (int64_t q = 0; q < nr2; ++q)
        for (int64_t h = 0; h < 2; ++h) {
          std::vector<Expr> idx = ops.out_index(2 * p + h, q);
          Expr part = ir::make_load(t, {ir::make_ramp(Expr((p * nr2 + q) * 4 + 2 * h), 1, 2)});
          seq.push_back(ir::make_store(ops.out, ir::make_load(ops.out, idx) + part, idx));
        }
    return ir::make_allocate(t, ir::make_seq(seq));
  };
  return in;
}

}  // namespace kiln::schedules
