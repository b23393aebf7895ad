#include "schedules/amx_tile.h"

#include "compiler/base/error.h"
#include "compiler/ir/op.h"
#include "compiler/ir/stmt.h"
#include "schedules/intrinsics.h"

namespace kiln::schedules {

using ir::DataType;
using ir::Expr;

bool has_amx_bf16(const Target& t) {
  return t.is_x86() && t.has("amx-tile") && t.has("amx-bf16");
}

Expr address_of(Expr load) {
  internal_check(load.as<ir::LoadNode>() != nullptr) << "address_of takes a load";
  return ir::make_call(DataType::handle(), "address_of", {std::move(load)}, ir::CallKind::Pure);
}

namespace {
// Bytes from row 0 to row 1 of an operand: the flattened layout decides it, not the template.
Expr row_stride(const std::function<Expr(int64_t)>& row) {
  return reinterpret(DataType::i64(), address_of(row(1))) -
         reinterpret(DataType::i64(), address_of(row(0)));
}
}  // namespace

te::TensorIntrin amx_gemm_bf16_tile(const AmxTile& tile,
                                    std::function<AmxOperands(const te::TensorizeRegion&)> bind) {
  internal_check(tile.k_steps > 0 && tile.row_tiles > 0 && tile.col_tiles > 0 &&
                 tile.row_tiles + tile.col_tiles + tile.row_tiles * tile.col_tiles <= 8)
      << "amx_gemm_bf16_tile: " << tile.row_tiles << "x" << tile.col_tiles
      << " C tiles need more than the 8 tile registers";
  te::TensorIntrin in;
  in.name = "amx_gemm_bf16_tile";
  in.extents = {tile.k_steps * kAmxKStep, kAmxTileRows * tile.row_tiles, tile.col_tiles,
                kAmxTileRows};
  in.emit = [tile, bind = std::move(bind)](const te::TensorizeRegion& r) -> ir::Stmt {
    const AmxOperands ops = bind(r);
    std::vector<Expr> args = {address_of(ops.c_row(0)), row_stride(ops.c_row),
                              address_of(ops.a_row(0)), row_stride(ops.a_row),
                              address_of(ops.b_row(0)), row_stride(ops.b_row),
                              Expr(tile.k_steps),       Expr(tile.row_tiles),
                              Expr(tile.col_tiles)};
    return ir::make_evaluate(
        ir::make_call(DataType::i32(), kAmxGemmBf16, std::move(args), ir::CallKind::TensorIntrinsic));
  };
  return in;
}

}  // namespace kiln::schedules
