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

Expr byte_offset(const Expr& from, const Expr& to) {
  return reinterpret(DataType::i64(), address_of(to)) -
         reinterpret(DataType::i64(), address_of(from));
}

}  // namespace

te::TensorIntrin amx_gemm_bf16_tile(const AmxTile& tile,
                                    std::function<AmxOperands(const te::TensorizeRegion&)> bind) {
  internal_check(tile.row_tiles > 0 && tile.col_tiles > 0 &&
                 tile.row_tiles + tile.col_tiles + tile.row_tiles * tile.col_tiles <= 8)
      << "amx_gemm_bf16_tile: " << tile.row_tiles << "x" << tile.col_tiles
      << " C tiles need more than the 8 tile registers";
  internal_check(!tile.steps.empty() && tile.steps.size() <= 3)
      << "amx_gemm_bf16_tile: 1 to 3 step loops, got " << tile.steps.size();
  te::TensorIntrin in;
  in.name = "amx_gemm_bf16_tile";
  in.extents = tile.steps;
  for (int64_t e : {kAmxKStep, kAmxTileRows * tile.row_tiles, tile.col_tiles, kAmxTileRows})
    in.extents.push_back(e);
  in.emit = [tile, bind = std::move(bind)](const te::TensorizeRegion& r) -> ir::Stmt {
    const AmxOperands ops = bind(r);
    // Three step loops always: missing outer ones have one step and stride 0.
    std::vector<int64_t> counts(3 - tile.steps.size(), 1);
    counts.insert(counts.end(), tile.steps.begin(), tile.steps.end());
    const StepIndex origin(tile.steps.size(), 0);
    auto operand = [&](const std::function<Expr(const StepIndex&, int64_t)>& row,
                       std::vector<Expr>& args, std::vector<Expr>& strides) {
      Expr first = row(origin, 0);
      args.push_back(address_of(first));
      args.push_back(byte_offset(first, row(origin, 1)));
      for (size_t d = 0; d < 3; ++d) {
        const size_t own = d + tile.steps.size();  // index into the template's steps
        if (own < 3 || counts[d] == 1) {
          strides.push_back(Expr(int64_t{0}));
          continue;
        }
        StepIndex next = origin;
        next[own - 3] = 1;
        strides.push_back(byte_offset(first, row(next, 0)));
      }
    };
    std::vector<Expr> args = {address_of(ops.c_row(0)), byte_offset(ops.c_row(0), ops.c_row(1))};
    std::vector<Expr> a_steps, b_steps;
    operand(ops.a_row, args, a_steps);
    operand(ops.b_row, args, b_steps);
    for (int64_t n : counts) args.push_back(Expr(n));
    args.insert(args.end(), a_steps.begin(), a_steps.end());
    args.insert(args.end(), b_steps.begin(), b_steps.end());
    args.push_back(Expr(tile.row_tiles));
    args.push_back(Expr(tile.col_tiles));
    args.push_back(Expr(int64_t{tile.whole_reduction ? 1 : 0}));
    return ir::make_evaluate(
        ir::make_call(DataType::i32(), kAmxGemmBf16, std::move(args), ir::CallKind::TensorIntrinsic));
  };
  return in;
}

}  // namespace kiln::schedules
