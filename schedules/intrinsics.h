// The tensor intrinsics of the operator library, in one place: the target instructions that
// make low precision pay, as kiln-named calls (ir::CallKind::TensorIntrinsic), and the
// TE-level tile bodies (te::TensorIntrin) that tensorized schedules splice in, parameterised
// by tile shape. Templates say *what* instruction a tile uses; codegen owns *how*: each
// architecture's table maps a kiln name and its types to an LLVM intrinsic
// (compiler/codegen/codegen_x86.cpp, codegen_aarch64.cpp), and rejects a target without it.
//
//   pair_dot_bf16  f32 x L += pairwise bf16 dots: L = 16 is x86 `vdpbf16ps zmm`
//                  (avx512bf16), L = 4 AArch64 `bfdot v.4s` (+bf16).
//   mmla_bf16      a 2x2 f32 tile += (2x4 bf16) x (2x4 bf16)^T: AArch64 `bfmmla` (+bf16).
//   pair_dot_i16   i32 x L += pairwise i16 dots, exact (int8 kernels widen to i16 first, so
//                  no 16-bit saturation as with `vpmaddubsw`): L = 16 is `vpdpwssd zmm`
//                  (avx512vnni); without VNNI, x86's `vpmaddwd` then an add (pair_dot_i16()
//                  chooses), and elsewhere widening multiplies and adds of the even and
//                  odd lanes, whose instructions LLVM selects.
//   quad_dot_i8    i32 x L += dots of four 8-bit values: x86 `vpdpbusd` (u8 x s8: L = 16
//                  zmm with avx512vnni, L = 8 ymm with AVX-VNNI), AArch64 `usdot v.4s`
//                  (u8 x s8, +i8mm: an ONNX model's u8 activations as they are) or `sdot
//                  v.4s` (s8 x s8, +dotprod: u8 data moves to s8 by 128 first). Four times
//                  the multiply-adds of an f32 FMA.
//
// `fmla .8h` (f16 accumulation on AArch64) needs no intrinsic: LLVM selects it for kiln's
// vectorised f16 multiply-add on targets with +fullfp16, so those templates stay plain TE.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "compiler/ir/expr.h"
#include "compiler/ir/stmt.h"
#include "compiler/target/target.h"
#include "compiler/te/schedule.h"

namespace kiln::schedules {

// The kiln names codegen's tables know.
inline constexpr char kPairDotBf16[] = "pair_dot_bf16";
inline constexpr char kMmlaBf16[] = "mmla_bf16";
inline constexpr char kPairDotI16[] = "pair_dot_i16";  // chosen per target, not in the tables
inline constexpr char kQuadDotI8[] = "quad_dot_i8";    // the same

// acc (f32 x L) + per lane l: a[2l]*b[2l] + a[2l+1]*b[2l+1], with a and b bf16 x 2L.
ir::Expr pair_dot_bf16(ir::Expr acc, ir::Expr a, ir::Expr b);
// acc (f32 x 4, a row-major 2x2 tile) + r[i][j] = Σk a[i*4+k]*b[j*4+k], a and b bf16 x 8
// (each two rows of four K values, row-major).
ir::Expr mmla_bf16(ir::Expr acc, ir::Expr a, ir::Expr b);

// acc (i32 x L) + per lane l: a[2l]*b[2l] + a[2l+1]*b[2l+1], with a and b i16 x 2L, exact
// (products and sums in 32 bits), through the best instruction `t` has (see above).
ir::Expr pair_dot_i16(ir::Expr acc, ir::Expr a, ir::Expr b, const Target& t);
// The L pair_dot_i16 takes best on `t`: 16 with AVX-512 (BW), 8 with AVX2, 4 on AArch64.
int64_t pair_dot_i16_lanes(const Target& t);

// acc (i32 x L) + per lane l: Σj a[4l+j]*b[4l+j], exact, with a of quad_dot_data_type(t)
// and b i8, both x 4L, through the target's byte dot instruction (see above).
ir::Expr quad_dot_i8(ir::Expr acc, ir::Expr a, ir::Expr b, const Target& t);
// The L quad_dot_i8 takes on `t`, or 0 where `t` has no byte dot instruction.
int64_t quad_dot_lanes(const Target& t);
// The type the instruction reads the data (the broadcast side) in: u8 on x86 and on AArch64
// with i8mm, i8 on AArch64 without.
ir::DataType quad_dot_data_type(const Target& t);

// `v` bit-cast to `t` (same total bits), e.g. two adjacent bf16 read as one i32.
ir::Expr reinterpret(ir::DataType t, ir::Expr v);

// How a tile's reduction loop treats the steps left after whole unrolled blocks.
enum class RemainderKind {
  Loop,      // one loop over them (dense)
  Unrolled,  // each step written out (conv2d)
};

// ---- dot tiles over 32-bit groups (bf16 -> f32, i16 -> i32, 8-bit quads -> i32) -----------

// A register tile of `rows` rows (matrix rows, output pixels) x `vecs` vectors of `lanes`
// accumulators, reduced over `pairs` groups of values, each group one 32-bit word (a pair of
// 16-bit values, a quad of 8-bit ones; the last group holding a single value when
// `odd_tail`, pairs only), `unroll` groups per iteration of the loop `loop`.outer.
struct PairDotTile {
  int64_t rows, vecs, lanes;
  int64_t pairs, unroll;
  bool odd_tail = false;
  std::string loop;  // the pair loop's name stem: "<loop>.outer", "<loop>.rest"
  RemainderKind remainder = RemainderKind::Unrolled;
};

// acc + pairwise dots of a and b (a broadcast pair, b a vector of pairs): pair_dot_bf16 or
// pair_dot_i16 bound to a target.
using PairDotFn = std::function<ir::Expr(ir::Expr acc, ir::Expr a, ir::Expr b)>;

// Where one tensorized region's operands are; the operator binds them from the region.
struct PairDotOperands {
  ir::Buffer out;  // the accumulators (f32 for bf16 pairs, i32 for i16 pairs)
  // The group of tile row `row` at group `k2` as one i32 (the lower K in the low bits).
  std::function<ir::Expr(const ir::Expr& k2, int64_t row)> a_pair;
  // Row `row`'s last single value with a zero partner, as an i32 (odd_tail only).
  std::function<ir::Expr(int64_t row)> a_last;
  // Vector `vec` of B at group `k2`: lanes groups, each column's group adjacent (VNNI).
  std::function<ir::Expr(const ir::Expr& k2, int64_t vec)> b_vector;
  // The index in `out` of row `row`, vector `vec` (a ramp of `lanes`).
  std::function<std::vector<ir::Expr>(int64_t row, int64_t vec)> out_index;
};

// The whole pair loop of one tile: per pair, `vecs` B vectors, one broadcast A pair per
// row, rows x vecs pair_dot_bf16 into the accumulators. It replaces the loops
// {pairs, 2, rows, vecs, lanes} of the accumulator stage (pairs, K in a pair, the tile).
te::TensorIntrin pair_dot_bf16_tile(
    const PairDotTile& tile, std::function<PairDotOperands(const te::TensorizeRegion&)> bind);
// The same tile over groups of `pair` values (bf16 or i16 pairs, u8 or i8 quads) through
// `dot`: the replaced loops are {pairs, 32 / bits of `pair`, rows, vecs, lanes}.
te::TensorIntrin pair_dot_tile(const PairDotTile& tile, ir::DataType pair, PairDotFn dot,
                               std::function<PairDotOperands(const te::TensorizeRegion&)> bind);

// ---- mmla_bf16 tile ----------------------------------------------------------------------

// A register tile of row_pairs x col_pairs 2x2 BFMMLA tiles, reduced over `blocks` blocks of
// four K values, `unroll` blocks per iteration of the loop `loop`.outer. The 2x2 tiles live
// in a register-sized buffer "bfmmla.tile" and are added into the accumulators at the end.
struct MmlaTile {
  int64_t row_pairs, col_pairs;
  int64_t blocks, unroll;
  std::string loop;
};

struct MmlaOperands {
  ir::Buffer out;  // the f32 accumulators
  // Rows 2p and 2p+1 of A at block `kq`: bf16 x 8, four K values per row.
  std::function<ir::Expr(const ir::Expr& kq, int64_t p)> a_block;
  // Columns 2q and 2q+1 of B at block `kq`: bf16 x 8, four K values per column.
  std::function<ir::Expr(const ir::Expr& kq, int64_t q)> b_block;
  // The index in `out` of tile row `row`, columns 2q and 2q+1 (a ramp of 2).
  std::function<std::vector<ir::Expr>(int64_t row, int64_t q)> out_index;
};

// Replaces the loops {blocks, 4, 2*row_pairs, col_pairs, 2} of the accumulator stage.
te::TensorIntrin mmla_bf16_tile(const MmlaTile& tile,
                                std::function<MmlaOperands(const te::TensorizeRegion&)> bind);

}  // namespace kiln::schedules
