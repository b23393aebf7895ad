// Intel AMX for bf16 (Sapphire Rapids and later: amx-tile, amx-bf16): the tensor intrinsic
// "amx_gemm_bf16" and the TE tile body that tensorized schedules splice in.
//
// One call is a whole tile GEMM: row_tiles x col_tiles f32 C tiles of 16x16 (each 16 rows
// of 64 bytes) += A (row_tiles tiles of 16 rows x 32 bf16 per K step) x B (col_tiles tiles
// of 16 VNNI rows: per row 16 columns x 2 adjacent K) over k_steps steps of 32 K values.
// The C tiles stay in tile registers for all K steps; `tdpbf16ps` does 16x16x32 per
// instruction. Codegen expands the call (compiler/codegen/codegen_amx.cpp), because tiles
// are not values kiln's IR can hold; it also asks the OS for the tile state once.
#pragma once

#include <cstdint>
#include <functional>

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
  int64_t k_steps;               // steps of 32 K values
};

// Where one tensorized region's operands are: each returns the scalar load of the tile's
// first element in row `r` (r = 0 and 1 give the address and the row stride).
struct AmxOperands {
  std::function<ir::Expr(int64_t r)> c_row;  // f32 C (the accumulators)
  std::function<ir::Expr(int64_t r)> a_row;  // bf16 A, K contiguous in a row
  std::function<ir::Expr(int64_t r)> b_row;  // bf16 B, VNNI rows (pairs of K per column)
};

// Replaces the loops {k_steps * 32, 16 * row_tiles, col_tiles, 16} of the accumulator
// stage (K, the tile's rows, its 16-column vectors, their lanes).
te::TensorIntrin amx_gemm_bf16_tile(const AmxTile& tile,
                                    std::function<AmxOperands(const te::TensorizeRegion&)> bind);

}  // namespace kiln::schedules
