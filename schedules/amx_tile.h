// Intel AMX for bf16 (Sapphire Rapids and later: amx-tile, amx-bf16): the tensor intrinsic
// "amx_gemm_bf16" and the TE tile body that tensorized schedules splice in.
//
// One call is a whole tile GEMM: row_tiles x col_tiles f32 C tiles of 16x16 (each 16 rows
// of 64 bytes) += A (row_tiles tiles of 16 rows x 32 bf16 per K step) x B (col_tiles tiles
// of 16 VNNI rows: per row 16 columns x 2 adjacent K) over all steps of 32 K values, which
// may be up to three nested loops with their own strides (a convolution's channel blocks
// and taps).
// The C tiles stay in tile registers for all K steps; `tdpbf16ps` does 16x16x32 per
// instruction. Codegen expands the call (compiler/codegen/codegen_amx.cpp), because tiles
// are not values kiln's IR can hold; it also asks the OS for the tile state once.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "compiler/ir/expr.h"
#include "compiler/te/schedule.h"
#include "compiler/target/target.h"

namespace kiln::schedules {

inline constexpr char kAmxGemmBf16[] = "amx_gemm_bf16";
inline constexpr int64_t kAmxTileRows = 16;  // rows of every tile, f32 columns of a C tile
inline constexpr int64_t kAmxKStep = 32;     // bf16 K values per A tile row (64 bytes)

// True when `t` may use AMX bf16 tiles. Templates check it in applies(): nothing AMX is
// offered to a CPU without it.
bool has_amx_bf16(const Target& t);

// The address of `load`'s element (a handle), for intrinsics that take pointers.
ir::Expr address_of(ir::Expr load);

struct AmxTile {
  int64_t row_tiles, col_tiles;  // C tiles: row_tiles + col_tiles + both multiplied <= 8
  // The reduction in steps of 32 K values, as up to three nested loops (outermost first):
  // {K/32} for a GEMM; {channel blocks, KH, KW} for a convolution, each step one tap.
  std::vector<int64_t> steps;
  // True when the tile's steps are the whole reduction, so C starts at zero: the tiles are
  // zeroed in registers instead of loaded (the zeros stored by the stage's init go unread).
  bool whole_reduction = true;
};

// Where one tensorized region's operands are: each returns the scalar load of the tile's
// first element in row `r` at reduction step `at` (one index per loop of AmxTile::steps).
// Codegen gets addresses and byte strides from them (row 0 and 1, step index 0 and 1), so
// any layout with constant strides works.
using StepIndex = std::vector<int64_t>;
struct AmxOperands {
  std::function<ir::Expr(int64_t r)> c_row;                     // f32 C (the accumulators)
  std::function<ir::Expr(const StepIndex& at, int64_t r)> a_row;  // bf16 A, 32 K in a row
  std::function<ir::Expr(const StepIndex& at, int64_t r)> b_row;  // bf16 B, 16 VNNI rows
};

// Replaces the loops {steps..., 32, 16 * row_tiles, col_tiles, 16} of the accumulator stage
// (the reduction loops, the 32 K values of a step, the tile's rows, its 16-column vectors,
// their lanes).
te::TensorIntrin amx_gemm_bf16_tile(const AmxTile& tile,
                                    std::function<AmxOperands(const te::TensorizeRegion&)> bind);

}  // namespace kiln::schedules
