// "transpose.shuffle": transposes that move the innermost dimension (NCHW -> NHWC, [.., a, b]
// -> [.., b, a], attention's head transposes) through blocked in-register transposes. A tile
// of T x T elements (T = the vector's f32 lanes, at most 16: 16x16 on AVX-512, 8x8 on AVX2,
// 4x4 on NEON) is read as T contiguous vectors of input rows, transposed in registers by a
// network of two-vector shuffles (log2 T stages, each exchanging one bit of the row index
// with the same bit of the column index), and written as T contiguous vectors of output rows.
// Both sides move whole vectors, where transpose.tiled reads one input element per lane.
//
// It applies where both dimensions of the tile hold at least T elements; the tiles at their
// ends that a non-multiple extent cuts short run the same way with masked loads and stores.
// Tiles are walked in blocks of `block` x `block` (a knob), so each row is read and written
// in runs of several vectors. Other shapes keep transpose.tiled
// (schedules/data_movement/data_movement.h).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "compiler/ir/stmt.h"
#include "schedules/op_template.h"

namespace kiln::schedules {

const OpTemplate& transpose_shuffle_template();

// The in-register transpose of `rows` (T vectors of T lanes, T a power of two >= 2): each
// intermediate vector is bound to a variable named after `stem`, and `use` receives the T
// columns (column c holds lane c of every row, row order) and returns the statement that
// stores them.
ir::Stmt transpose_in_registers(const std::vector<ir::Expr>& rows, const std::string& stem,
                                const std::function<ir::Stmt(const std::vector<ir::Expr>&)>& use);

}  // namespace kiln::schedules
